package io.sluice.flight.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The loader against real Flight servers: every epoch delivers each shard's rows exactly once over
 * all ranks, in an order fixed by (seed, epoch) whatever the number of readers; a resumed loader
 * continues exactly at its cursor; closing mid-epoch frees everything and ends the servers'
 * grants. Every test's allocator is closed at its end, so a leaked batch fails it.
 */
class FlightLoaderTest {
  static final Duration WAIT = Duration.ofSeconds(60);
  static final int SHARDS = 11;
  static final int ROWS = 500;

  /** The body of a test against served shards. */
  interface ShardsTest {
    void run(BufferAllocator allocator, ShardedTables tables, List<Shard> shards) throws Exception;
  }

  /**
   * Runs {@code test} against {@code shards} shards of {@code rows} rows per batch, served by
   * {@code servers} real servers (with the data plane when {@code dataPlane}) and listed with a
   * fresh allocator; closes the servers and then the allocator, so a leaked batch fails the test.
   */
  static void withShards(int servers, int shards, int rows, boolean dataPlane, ShardsTest test) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ShardedTables tables = new ShardedTables(allocator, servers, shards, rows, dataPlane)) {
      test.run(allocator, tables, tables.shards(allocator));
    }
  }

  /** What one rank saw: per epoch, the shards' names in delivery order. */
  static List<List<String>> readAll(FlightLoader loader, Set<Long> ids) throws Exception {
    List<List<String>> epochs = new ArrayList<>();
    while (!loader.finished()) {
      List<String> epoch = new ArrayList<>();
      Optional<LoadedShard> s;
      while ((s = loader.next(WAIT)).isPresent()) {
        try (LoadedShard shard = s.get()) {
          epoch.add(shard.shard().name());
          if (ids != null) {
            collect(shard, epochs.size(), ids);
          }
        }
      }
      epochs.add(epoch);
    }
    return epochs;
  }

  /** Adds epoch-tagged ids; fails on a row seen twice in one epoch. */
  static void collect(LoadedShard shard, int epoch, Set<Long> ids) {
    for (VectorSchemaRoot b : shard.batches()) {
      BigIntVector id = (BigIntVector) b.getVector(0);
      for (int i = 0; i < b.getRowCount(); i++) {
        long tagged = epoch * 1_000_000_000L + id.get(i);
        assertTrue(ids.add(tagged), "row " + id.get(i) + " delivered twice in epoch " + epoch);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void everyRowExactlyOncePerEpochOverAllRanks(int world) throws Exception {
    withShards(2, SHARDS, ROWS, true, (allocator, tables, shards) -> {
      assertEquals(SHARDS, shards.size());
      Set<Long> ids = new HashSet<>();
      List<List<List<String>>> byRank = new ArrayList<>();
      for (int rank = 0; rank < world; rank++) {
        try (FlightLoader loader = FlightLoader.builder(allocator, shards).rank(rank, world).seed(42).epochs(2)
            .prefetch(3).config(ShardedTables.config(true)).build()) {
          byRank.add(readAll(loader, ids));
        }
      }
      long rowsPerEpoch = 0;
      for (int k = 0; k < SHARDS; k++) {
        rowsPerEpoch += (long) ShardedTables.batchesOf(k) * ROWS;
      }
      assertEquals(2 * rowsPerEpoch, ids.size());
      for (int epoch = 0; epoch < 2; epoch++) {
        List<String> union = new ArrayList<>();
        for (List<List<String>> rank : byRank) {
          union.addAll(rank.get(epoch));
        }
        assertEquals(SHARDS, union.size(), "epoch " + epoch + ": " + union);
        assertEquals(SHARDS, new TreeSet<>(union).size(), "a shard twice in epoch " + epoch + ": " + union);
        int sizes = byRank.stream().mapToInt(r -> r.get(0).size()).max().orElseThrow()
            - byRank.stream().mapToInt(r -> r.get(0).size()).min().orElseThrow();
        assertTrue(sizes <= 1, "ranks' shares differ by more than one shard");
      }
      tables.awaitNoGrants();
    });
  }

  @Test
  void orderIsFixedBySeedAndEpochWhateverTheNumberOfReaders() throws Exception {
    withShards(2, SHARDS, 10, false, (allocator, tables, shards) -> {
      List<List<String>> first;
      List<List<String>> second;
      try (FlightLoader a = FlightLoader.builder(allocator, shards).seed(7).epochs(3).prefetch(4).build()) {
        first = readAll(a, null);
      }
      try (FlightLoader b = FlightLoader.builder(allocator, shards).seed(7).epochs(3).prefetch(1).build()) {
        second = readAll(b, null);
      }
      assertEquals(first, second, "two runs with the same seed");
      assertNotEquals(first.get(0), first.get(1), "epochs 0 and 1 visit the shards in the same order");
      // Three readers together visit the shards in the single reader's order, position by position.
      List<List<List<String>>> ranks = new ArrayList<>();
      for (int rank = 0; rank < 3; rank++) {
        try (FlightLoader r = FlightLoader.builder(allocator, shards).rank(rank, 3).seed(7).epochs(3).build()) {
          ranks.add(readAll(r, null));
        }
      }
      for (int epoch = 0; epoch < 3; epoch++) {
        List<String> interleaved = new ArrayList<>();
        for (int p = 0; interleaved.size() < SHARDS; p++) {
          for (List<List<String>> rank : ranks) {
            if (p < rank.get(epoch).size()) {
              interleaved.add(rank.get(epoch).get(p));
            }
          }
        }
        assertEquals(first.get(epoch), interleaved, "epoch " + epoch);
      }
      try (FlightLoader other = FlightLoader.builder(allocator, shards).seed(8).epochs(1).build()) {
        assertNotEquals(first.get(0), readAll(other, null).get(0), "seeds 7 and 8 give the same order");
      }
      for (Shard s : shards) {
        assertEquals(ShardedTables.batchesOf(Integer.parseInt(s.name().substring(3))) * 10L, s.rows());
      }
    });
  }

  @Test
  void resumedLoaderContinuesExactlyAtItsCursorAndRereadsNothing() throws Exception {
    withShards(2, SHARDS, 100, true, (allocator, tables, shards) -> {
      List<List<String>> whole;
      try (FlightLoader all = FlightLoader.builder(allocator, shards).rank(1, 2).seed(3).epochs(2)
          .config(ShardedTables.config(true)).build()) {
        whole = readAll(all, null);
      }
      // Stop after 3 shards of epoch 1, as a trainer that checkpoints and dies would.
      List<String> before = new ArrayList<>(whole.get(0));
      Cursor checkpoint;
      try (FlightLoader first = FlightLoader.builder(allocator, shards).rank(1, 2).seed(3).epochs(2).prefetch(3)
          .config(ShardedTables.config(true)).build()) {
        Optional<LoadedShard> done;
        while ((done = first.next(WAIT)).isPresent()) {
          done.get().close(); // epoch 0 consumed
        }
        for (int i = 0; i < 3; i++) {
          try (LoadedShard s = first.next(WAIT).orElseThrow()) {
            before.add(s.shard().name());
            checkpoint = s.cursorAfter();
            assertEquals(checkpoint, first.cursor());
          }
        }
        checkpoint = Cursor.parse(first.cursor().toString());
      } // closed with shards read ahead
      assertEquals(new Cursor(1, 3), checkpoint);
      List<String> after = new ArrayList<>();
      try (FlightLoader resumed = FlightLoader.builder(allocator, shards).rank(1, 2).seed(3).epochs(2).prefetch(2)
          .config(ShardedTables.config(true)).resumeFrom(checkpoint).build()) {
        Optional<LoadedShard> s;
        while ((s = resumed.next(WAIT)).isPresent()) {
          try (LoadedShard shard = s.get()) {
            after.add(shard.shard().name());
          }
        }
        assertTrue(resumed.finished());
        assertEquals(after.size(), resumed.streamsOpened(), "the resumed loader opened a consumed shard");
      }
      before.addAll(after);
      List<String> expected = new ArrayList<>(whole.get(0));
      expected.addAll(whole.get(1));
      assertEquals(expected, before);
      tables.awaitNoGrants();
    });
  }

  @Test
  void readerClosedMidEpochLeaksNothingAndServersEndItsGrants() throws Exception {
    withShards(2, SHARDS, 50_000, true, (allocator, tables, shards) -> {
      int[] regions = tables.servers.stream().mapToInt(s -> s.registeredRegions()).toArray();
      try (BufferAllocator mine = allocator.newChildAllocator("reader", 0, Long.MAX_VALUE)) {
        FlightLoader loader = FlightLoader.builder(mine, shards).seed(1).prefetch(4)
            .config(ShardedTables.config(true)).build();
        try (LoadedShard s = loader.next(WAIT).orElseThrow()) {
          assertEquals("tcp", s.dataPath());
          assertTrue(s.rows() >= 50_000);
        }
        loader.close(); // shards being read and read ahead
        assertThrows(IllegalStateException.class, () -> loader.next(WAIT));
      } // the child allocator fails to close if a batch leaked
      tables.awaitNoGrants();
      assertEquals(List.of(regions[0], regions[1]),
          tables.servers.stream().map(s -> s.registeredRegions()).toList());
    });
  }

  @Test
  void plainFlightServersAreReadOverDoGet() throws Exception {
    withShards(1, 3, 10, false, (allocator, tables, shards) -> {
      try (FlightLoader loader = FlightLoader.builder(allocator, shards).epochs(1)
          .config(ShardedTables.config(true)).build();
           LoadedShard s = loader.next(WAIT).orElseThrow()) {
        assertEquals("grpc", s.dataPath());
      }
    });
  }

  @Test
  void failedShardIsNamedAndTheCursorStaysOnIt() throws Exception {
    withShards(2, SHARDS, 10, true, (allocator, tables, shards) -> {
      Shard first = shards.get(EpochOrder.permutation(shards.size(), 9, 0)[0]);
      tables.servers.stream().filter(s -> s.location().equals(first.location())).findFirst().orElseThrow()
          .remove(first.name());
      try (FlightLoader loader = FlightLoader.builder(allocator, shards).seed(9).epochs(1).prefetch(3)
          .config(ShardedTables.config(true)).build()) {
        ShardReadException e = assertThrows(ShardReadException.class, () -> loader.next(WAIT));
        assertTrue(e.getMessage().contains(first.toString()), e.getMessage());
        assertEquals(Cursor.START, loader.cursor());
        assertThrows(IllegalStateException.class, () -> loader.next(WAIT));
      }
      tables.awaitNoGrants();
    });
  }

  @Test
  void badArgumentsAreNamed() throws Exception {
    withShards(1, 3, 10, false, (allocator, tables, shards) -> {
      assertTrue(assertThrows(IllegalArgumentException.class,
          () -> FlightLoader.builder(allocator, shards).rank(2, 2)).getMessage().contains("rank"));
      assertTrue(assertThrows(IllegalArgumentException.class,
          () -> FlightLoader.builder(allocator, shards).prefetch(0)).getMessage().contains("prefetch"));
      assertTrue(assertThrows(IllegalArgumentException.class,
          () -> FlightLoader.builder(allocator, shards).resumeFrom(new Cursor(0, 4)).build()).getMessage()
          .contains("past the 3 shards"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> Cursor.parse("3-1")).getMessage()
          .contains("epoch:position"));
      assertTrue(assertThrows(IllegalStateException.class,
          () -> Shards.list(allocator, tables.locations(), "nothing.", WAIT, ShardedTables.config(true)))
          .getMessage().contains("nothing."));
    });
  }
}
