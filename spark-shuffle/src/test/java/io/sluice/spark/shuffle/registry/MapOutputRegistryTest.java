package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.LoopbackTransport;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Range queries as a peer may send them: answered from the index, and refused cheaply when they are not. */
class MapOutputRegistryTest {
  private static final int SHUFFLE = 3;
  private static final long MAP = 7;

  @RegisterExtension
  final LoopbackTransport loopback = new LoopbackTransport("registry-test");

  @TempDir
  Path dir;

  private ShuffleFiles files() {
    return new ShuffleFiles() {
      @Override
      public File dataFile(int shuffleId, long mapId) {
        return dir.resolve("shuffle_" + shuffleId + "_" + mapId + "_0.data").toFile();
      }

      @Override
      public File indexFile(int shuffleId, long mapId) {
        return dir.resolve("shuffle_" + shuffleId + "_" + mapId + "_0.index").toFile();
      }
    };
  }

  /** A committed map output of three partitions of 10, 0 and 20 bytes. */
  private void commitThreePartitions() throws IOException {
    Files.write(files().dataFile(SHUFFLE, MAP).toPath(), new byte[30]);
    try (DataOutputStream index = new DataOutputStream(Files.newOutputStream(files().indexFile(SHUFFLE, MAP).toPath()))) {
      for (long offset : new long[] {0, 10, 10, 30}) {
        index.writeLong(offset);
      }
    }
  }

  @Test
  void answersTheOffsetsOfTheAskedPartitions() throws IOException {
    commitThreePartitions();
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      RangeProtocol.Answer answer = registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 1, 3));
      assertArrayEquals(new long[] {10, 10, 30}, answer.offsets());
      assertEquals(1, registry.registeredCount(SHUFFLE));
    }
  }

  @Test
  void aQueryForMorePartitionsThanTheIndexHoldsFailsBeforeAllocatingForThem() throws IOException {
    commitThreePartitions();
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      // 2^31 - 2 partitions would be a 16 GiB array of offsets: refused from the index's size alone.
      IOException e = assertThrows(IOException.class,
          () -> registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 0, Integer.MAX_VALUE - 1)));
      assertTrue(e.getMessage().contains("has 3 partitions"), e.getMessage());
    }
  }

  @Test
  void queriesForShufflesThisExecutorDoesNotHoldLeaveNoTrace() throws IOException {
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      for (int shuffle = 100; shuffle < 1100; shuffle++) {
        int id = shuffle;
        assertThrows(IOException.class, () -> registry.describe(id, new RangeProtocol.Query(MAP, 0, 1)));
      }
      assertEquals(0, registry.trackedShuffles(), "bogus shuffle ids were remembered");
      assertEquals(0, loopback.transport().liveRegionCount());
    }
  }
}
