package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteView;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.region.Region;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Arena regions as sealed memfds ({@link SealedMemory}): a process of the same user that reopens a
 * region through the path its owner publishes cannot shorten it (nor lengthen it), so a view a
 * reader holds keeps its bytes; readers open only the arena owner's memfds; and with
 * {@code shm.sealed} off regions are files again.
 */
@Timeout(60)
class ShmSealedRegionTest {
  private static final int REGION_BYTES = 1 << 20;

  @BeforeEach
  void needsSealedMemory() {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    assumeTrue(SealedMemory.isAvailable(), () -> "no sealed memory: " + SealedMemory.unavailabilityCause().orElse(""));
  }

  private static Path published(RegisteredRegion r) {
    return Path.of(((Region) r).shmLocation().orElseThrow().path());
  }

  @Test
  void aRegionCannotBeCutUnderAViewAndTheViewKeepsItsBytes() throws Exception {
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      try (RegisteredRegion r = owner.allocate(REGION_BYTES)) {
        for (int i = 0; i < REGION_BYTES; i += 8) {
          r.buffer().putLong(i, i * 0x9E3779B97F4A7C15L);
        }
        Path path = published(r);
        assertTrue(ShmFiles.isProcDescriptor(path), "published as " + path);
        try (RemoteView view = c.view(r.descriptor(), 0, REGION_BYTES).get(10, TimeUnit.SECONDS).orElseThrow()) {
          // Another process of the user would open the same path; this one stands in for it.
          try (FileChannel cutter = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            IOException shrink = assertThrows(IOException.class, () -> cutter.truncate(REGION_BYTES / 2));
            assertTrue(String.valueOf(shrink.getMessage()).contains("not permitted"), shrink.toString());
            assertThrows(IOException.class, () -> cutter.write(ByteBuffer.allocate(8), REGION_BYTES));
            assertEquals(REGION_BYTES, cutter.size());
          }
          ByteBuffer b = view.buffer();
          for (int i = 0; i < REGION_BYTES; i += 8) {
            assertEquals(i * 0x9E3779B97F4A7C15L, b.getLong(i), "byte " + i + " of the view");
          }
          ByteBuffer read = ByteBuffer.allocate(64);
          view.read(REGION_BYTES - 64, read);
          assertEquals((REGION_BYTES - 8) * 0x9E3779B97F4A7C15L, read.getLong(56));
        }
      }
      c.close();
    }
  }

  @Test
  void aReaderOpensOnlyAMemfdOfThePeersArena() throws Exception {
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      try (RegisteredRegion r = owner.allocate(4096)) {
        Path path = published(r);
        long pid = ProcessHandle.current().pid();
        String name = Files.readSymbolicLink(path).toString();
        String prefix = name.substring(SealedMemory.PROC_NAME_PREFIX.length(), name.indexOf("region-"));
        ShmFiles.Opened opened = ShmFiles.openMemfd(path, pid, prefix);
        assertTrue(opened.sealed());
        assertEquals(4096, opened.channel().size());
        opened.channel().close();
        assertThrows(IOException.class, () -> ShmFiles.openMemfd(path, pid + 1, prefix), "another process's descriptor");
        assertThrows(IOException.class, () -> ShmFiles.openMemfd(path, pid, "sluice-00-"), "another arena's memfd");
        Path file = Files.createTempFile("sluice-not-a-memfd", "");
        try {
          assertThrows(IOException.class, () -> ShmFiles.openMemfd(file, pid, prefix));
        } finally {
          Files.delete(file);
        }
      }
    }
  }

  @Test
  void withSealingOffRegionsAreFilesInTheArena() throws Exception {
    try (TransportHarness h = new TransportHarness("shm", Map.of(TransportKeys.SHM_SEALED.key(), "false"))) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      try (RegisteredRegion r = owner.allocate(4096)) {
        Path path = published(r);
        assertFalse(ShmFiles.isProcDescriptor(path), "published as " + path);
        assertTrue(Files.isRegularFile(path), path.toString());
      }
    }
  }
}
