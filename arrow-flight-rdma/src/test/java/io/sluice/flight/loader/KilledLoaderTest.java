package io.sluice.flight.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * A trainer killed mid-epoch: its loader, in a JVM of its own, has taken a shard and has more
 * being read ahead when the JVM is killed (SIGKILL); the servers end its streams and grants and
 * keep no memory registered for it.
 */
class KilledLoaderTest {
  @Test
  void loaderKilledMidEpochLeavesNoGrantsOnTheServers() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         ShardedTables tables = new ShardedTables(allocator, 2, 11, 50_000, true)) {
      List<Integer> regions = tables.servers.stream().map(s -> s.registeredRegions()).toList();
      List<String> uris = tables.locations().stream().map(l -> l.getUri().toString()).toList();
      try (ChildJvm trainer = ChildJvm.start(StalledTrainer.class, uris)) {
        assertEquals("TRAINING tcp", trainer.awaitLine("TRAINING", "the trainer process ended before it trained"));
        trainer.kill();
        tables.awaitNoGrants();
        assertEquals(regions, tables.servers.stream().map(s -> s.registeredRegions()).toList(),
            "regions registered for the dead trainer");
      }
    }
  }

  /** A trainer in its own JVM: takes one shard with more read ahead, says so, then stalls until killed. */
  public static final class StalledTrainer {
    public static void main(String[] args) throws Exception {
      BufferAllocator allocator = new RootAllocator();
      List<Location> locations = new ArrayList<>();
      for (String a : args) {
        locations.add(new Location(a));
      }
      List<Shard> shards = Shards.list(allocator, locations, "t.", Duration.ofSeconds(30), ShardedTables.config(true));
      FlightLoader loader = FlightLoader.builder(allocator, shards).seed(5).prefetch(4)
          .config(ShardedTables.config(true)).build();
      LoadedShard first = loader.next(Duration.ofSeconds(60)).orElseThrow();
      System.out.println("TRAINING " + first.dataPath());
      System.out.flush();
      Thread.sleep(TimeUnit.MINUTES.toMillis(5));
    }
  }
}
