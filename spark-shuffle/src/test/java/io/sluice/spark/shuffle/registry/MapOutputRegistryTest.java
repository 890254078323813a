package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.Checksums;
import io.sluice.transport.LoopbackTransport;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
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
    return TestShuffleFiles.in(dir);
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

  /** A committed map output of random bytes with these partition lengths; returns its data. */
  private byte[] commit(long mapId, int... lengths) throws IOException {
    int total = java.util.Arrays.stream(lengths).sum();
    byte[] data = new byte[total];
    new java.util.Random(mapId).nextBytes(data);
    if (total > 0) {
      Files.write(files().dataFile(SHUFFLE, mapId).toPath(), data);
    }
    try (DataOutputStream index = new DataOutputStream(Files.newOutputStream(files().indexFile(SHUFFLE, mapId).toPath()))) {
      long offset = 0;
      index.writeLong(offset);
      for (int length : lengths) {
        offset += length;
        index.writeLong(offset);
      }
    }
    return data;
  }

  private static int[] expectedChecksums(byte[] data, int... lengths) {
    int[] out = new int[lengths.length];
    for (int p = 0, at = 0; p < lengths.length; at += lengths[p], p++) {
      out[p] = Checksums.crc32c(ByteBuffer.wrap(data, at, lengths[p]));
    }
    return out;
  }

  @Test
  void answersCarryTheCrc32cOfEachPartitionsBytes() throws IOException {
    int[] lengths = {10, 0, 20, 1, 0};
    byte[] data = commit(MAP, lengths);
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      RangeProtocol.Answer all = registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 0, lengths.length));
      int[] expected = expectedChecksums(data, lengths);
      assertArrayEquals(expected, all.checksums());
      assertEquals(0, all.checksum(1), "an empty partition has the CRC32C of no bytes");
      assertEquals(0, Checksums.crc32c(ByteBuffer.allocate(0)));
      RangeProtocol.Answer some = registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 2, 4));
      assertArrayEquals(new int[] {expected[2], expected[3]}, some.checksums());
    }
  }

  @Test
  void partitionsSpanningRegistrationWindowsAreChecksummedWhole() throws IOException {
    // Windows of 7 bytes: every partition but the 1-byte one crosses at least one window end.
    int[] lengths = {9, 1, 23, 0, 15};
    byte[] data = commit(MAP, lengths);
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 7)) {
      RangeProtocol.Answer all = registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 0, lengths.length));
      assertEquals(7, all.windows().size());
      assertArrayEquals(expectedChecksums(data, lengths), all.checksums());
    }
  }

  @Test
  void aMapOutputWithoutRecordsHasOnlyEmptyPartitions() throws IOException {
    commit(MAP, 0, 0, 0);
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      assertArrayEquals(new int[] {0, 0},
          registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 1, 3)).checksums());
    }
  }

  @Test
  void checksumsAreThoseOfTheBytesAsRegistered() throws IOException {
    int[] lengths = {16, 16};
    byte[] data = commit(MAP, lengths);
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      registry.register(SHUFFLE, MAP);
      // A byte of the committed file changes afterwards (a disk, or anyone writing it): answers
      // keep the checksums computed at registration, so readers see the change as corruption.
      try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(
          files().dataFile(SHUFFLE, MAP).toPath(), java.nio.file.StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(new byte[] {(byte) ~data[20]}), 20);
      }
      assertArrayEquals(expectedChecksums(data, lengths),
          registry.describe(SHUFFLE, new RangeProtocol.Query(MAP, 0, 2)).checksums());
    }
  }

  @Test
  void aRegistrationOverlappingAnUnregisteredShuffleStartsOverAndLeavesNoRegion() throws IOException {
    byte[] data = commit(MAP, 8, 8);
    java.util.concurrent.atomic.AtomicInteger lookups = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<MapOutputRegistry> self = new java.util.concurrent.atomic.AtomicReference<>();
    ShuffleFiles racing = new ShuffleFiles() {
      @Override
      public File dataFile(int shuffleId, long mapId) {
        return files().dataFile(shuffleId, mapId);
      }

      @Override
      public File indexFile(int shuffleId, long mapId) {
        // While the first registration reads the files (outside the registry's lock), another
        // shuffle is unregistered; then this shuffle's files go, as the manager deletes them.
        switch (lookups.incrementAndGet()) {
          case 1 -> self.get().unregisterShuffle(SHUFFLE + 1);
          case 2 -> {
            self.get().unregisterShuffle(SHUFFLE);
            files().dataFile(shuffleId, mapId).delete();
            files().indexFile(shuffleId, mapId).delete();
          }
          default -> { }
        }
        return files().indexFile(shuffleId, mapId);
      }
    };
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), racing, 1 << 20)) {
      self.set(registry);
      // First try: another shuffle went meanwhile, so it starts over; the second try finds the
      // files deleted and fails rather than registering them again.
      assertThrows(IOException.class, () -> registry.register(SHUFFLE, MAP));
      assertEquals(0, registry.registeredCount());
      assertEquals(0, loopback.transport().liveRegionCount(), "a window of an abandoned registration is still live");
    }
    assertEquals(16, data.length);
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
