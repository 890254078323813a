package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The leak check itself: a harness must fail a test that leaks a region or leaves shm files. */
class TransportHarnessTest {

  @Test
  void leakedRegionFailsTheTest() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable());
    TransportHarness h = new TransportHarness("tcp", Map.of(TransportOption.SHM_ENABLED.key(), "false"));
    Transport t = h.open(MessageHandler.REJECT_ALL);
    RegisteredRegion leaked = t.allocate(4096);
    AssertionError e = assertThrows(AssertionError.class, h::close);
    assertTrue(e.getMessage().contains("1 live regions"), e.getMessage());
    assertFalse(leaked.isOpen(), "closing the transport revokes what the test leaked");
    assertFalse(Files.exists(h.shmDir()), "the shm folder is removed even after a failure");
  }

  @Test
  void fileLeftInTheShmFolderFailsTheTest() throws Exception {
    TransportHarness h = new TransportHarness("tcp", Map.of(TransportOption.SHM_ENABLED.key(), "false"));
    Path stray = Files.createFile(h.shmDir().resolve("sluice-stray"));
    AssertionError e = assertThrows(AssertionError.class, h::close);
    assertTrue(e.getMessage().contains("sluice-stray"), e.getMessage());
    assertFalse(Files.exists(stray));
  }

  @Test
  void cleanTestPasses() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable());
    TransportHarness h = new TransportHarness("shm", Map.of());
    Transport a = h.open(MessageHandler.REJECT_ALL);
    Transport b = h.open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion r = a.allocate(1 << 16);
        RegisteredRegion d = b.allocate(1 << 16);
        Connection c = TransportHarness.connect(b, a)) {
      TransportTestSupport.await(c.read(r.descriptor(), 0, d, 0, 1 << 16));
      assertEquals("shm", c.dataPath());
    }
    h.close();
    assertFalse(Files.exists(h.shmDir()));
  }
}
