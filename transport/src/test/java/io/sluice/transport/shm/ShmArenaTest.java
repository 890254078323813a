package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.TransportHarness;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The arena's clean-up of other processes' folders: liveness is the owner lock, never the pid. */
@Timeout(60)
class ShmArenaTest {
  /** Above any Linux pid_max: a pid no process of this namespace has. */
  private static final long DEAD_PID = 1L << 23;

  private TransportHarness harness;
  private Path shmDir;

  @BeforeEach
  void start() {
    assumeTrue(ShmArena.usable(Path.of("/dev/shm")), "no /dev/shm");
    harness = new TransportHarness("shm", Map.of());
    shmDir = harness.scratchShmDir("reclaim");
  }

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  /** A folder as another process's arena looks, with an owner file nobody has locked yet. */
  private Path foreignArena(long pid, long node) throws IOException {
    Path dir = Files.createDirectory(shmDir.resolve(String.format("sluice-%d-%016x", pid, node)));
    Files.write(dir.resolve(ShmArena.TOKEN_FILE), new byte[ShmArena.TOKEN_LENGTH]);
    Files.createFile(dir.resolve(ShmArena.OWNER_FILE));
    return dir;
  }

  @Test
  void arenaWhoseOwnerLockIsHeldSurvivesEvenWithADeadPid() throws Exception {
    Path live = foreignArena(DEAD_PID, 0xa);
    Path stale = foreignArena(DEAD_PID + 1, 0xb);
    Process holder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), OwnerLockHolder.class.getName(),
        live.resolve(ShmArena.OWNER_FILE).toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("locked", out.readLine(), "the lock holder did not start");
      try (ShmArena mine = ShmArena.open(shmDir, 0xc)) {
        assertTrue(Files.isDirectory(live), "an arena whose owner holds its lock was deleted");
        assertFalse(Files.exists(stale), "an arena whose lock nobody holds was kept");
        assertTrue(Files.isDirectory(mine.directory()));
      }
    } finally {
      holder.getOutputStream().close();
      if (!holder.waitFor(30, TimeUnit.SECONDS)) {
        holder.destroyForcibly();
      }
    }
  }
}
