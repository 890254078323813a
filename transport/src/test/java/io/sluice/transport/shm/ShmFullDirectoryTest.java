package io.sluice.transport.shm;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A shm folder too small for a region, as a container's 64 MiB {@code /dev/shm} is for a large
 * one: a tmpfs of 2 MiB mounted by the test (root only; skipped otherwise). Allocation must find
 * out at once and give the region direct memory, never a mapping whose pages fault later.
 */
@Timeout(120)
class ShmFullDirectoryTest {
  private static final int REGION_BYTES = 8 << 20;

  private Path mount;
  private boolean mounted;
  private TransportHarness harness;

  @BeforeEach
  void mountSmallTmpfs() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable");
    assumeTrue("root".equals(System.getProperty("user.name")), "mounting a tmpfs needs root");
    mount = Files.createTempDirectory("sluice-small-shm");
    mounted = run("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount.toString()) == 0;
    assumeTrue(mounted, "cannot mount a tmpfs here");
    harness = new TransportHarness("shm", Map.of());
  }

  @AfterEach
  void unmount() throws Exception {
    if (harness != null) {
      harness.close();
    }
    if (mounted) {
      // Lazy, so a failing test that left a mapping behind still leaves no mount behind.
      assertEquals(0, run("umount", "-l", mount.toString()), "could not unmount " + mount);
    }
    if (mount != null) {
      Files.deleteIfExists(mount);
    }
  }

  private static int run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).inheritIO().start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }

  @Test
  void regionThatDoesNotFitLivesInDirectMemoryAndIsReadable() throws Exception {
    // Files in the small folder: a sealed memfd would not live there.
    Transport server = harness.open(MessageHandler.REJECT_ALL, Map.of(TransportOption.SHM_DIR.key(), mount.toString(),
        TransportOption.SHM_SEALED.key(), "false"));
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion src = server.allocate(REGION_BYTES);
        RegisteredRegion dst = client.allocate(REGION_BYTES);
        Connection c = TransportHarness.connect(client, server)) {
      TransportTestSupport.fillPattern(src, 7); // touches every page
      await(c.read(src.descriptor(), 0, dst, 0, REGION_BYTES));
      TransportTestSupport.assertPattern(7, 0, dst, 0, REGION_BYTES);
    }
  }
}
