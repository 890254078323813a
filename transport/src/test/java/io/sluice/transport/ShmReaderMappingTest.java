package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What a same-host reader keeps mapped of its peer's shared memory. A mapping of a peer's region
 * pins that memory (tmpfs pages, or disk blocks of a deleted shuffle file) even after the owner
 * freed it, so a closed connection must let go of every mapping it made. Linux only: counts the
 * reader's mappings in /proc/self/maps.
 */
class ShmReaderMappingTest {
  private static final Path MAPS = Path.of("/proc/self/maps");

  @Test
  void closingAConnectionReleasesItsMappingsOfThePeer() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable() && Files.isReadable(MAPS));
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      try (RegisteredRegion dst = reader.allocate(1 << 20)) {
        Connection c = TransportHarness.connect(reader, owner);
        assertEquals("shm", c.dataPath());
        for (int i = 0; i < 20; i++) {
          try (RegisteredRegion r = owner.allocate(1 << 20)) {
            await(c.read(r.descriptor(), 0, dst, 0, 1 << 20));
          }
        }
        c.close();
        // Dropped mappings are unmapped by the collector; give it every chance.
        Eventually.reaches("mappings of the peer's freed regions (of 20 read) held after the connection closed", 0L,
            () -> {
              System.gc();
              return mappingsOfFreedFiles(h.shmDir());
            });
      }
    }
  }

  /** Mappings in this process of files under {@code dir} that were already deleted. */
  private static long mappingsOfFreedFiles(Path dir) {
    String prefix = dir.toString() + "/";
    try {
      return Files.readAllLines(MAPS).stream()
          .filter(line -> line.contains(prefix) && line.endsWith("(deleted)"))
          .count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
