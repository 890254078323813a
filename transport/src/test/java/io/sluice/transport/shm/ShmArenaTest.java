package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportTestSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
    Path dir = Files.createDirectory(shmDir.resolve(String.format("sluice-%d-%016x", pid, node)),
        ShmFiles.folderMode());
    Files.setPosixFilePermissions(dir, ShmFiles.FOLDER_MODE);
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
      // Read off this thread, so a child that never starts fails the wait instead of blocking it.
      CompletableFuture<String> firstLine = CompletableFuture.supplyAsync(() -> {
        try {
          return out.readLine();
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      assertEquals("locked", TransportTestSupport.await(firstLine, Duration.ofSeconds(30)),
          "the lock holder did not start");
      try (ShmArena mine = ShmArena.open(shmDir, 0xc)) {
        mine.reclaimed().get(30, TimeUnit.SECONDS);
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

  /** A folder outside the shm directory with files the clean-up must never touch. */
  private Path victim() throws IOException {
    Path dir = Files.createTempDirectory("sluice-victim");
    Files.write(dir.resolve("region-0"), new byte[] {1});
    Files.createFile(dir.resolve(ShmArena.OWNER_FILE));
    return dir;
  }

  private static void deleteVictim(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      for (Path p : files.toList()) {
        Files.deleteIfExists(p);
      }
    }
    Files.deleteIfExists(dir);
  }

  @Test
  void staleArenaNameThatIsALinkIsNeverFollowed() throws Exception {
    Path victim = victim();
    try {
      Path link = Files.createSymbolicLink(shmDir.resolve(String.format("sluice-%d-%016x", DEAD_PID, 0xd)), victim);
      ShmArena.reclaimStale(shmDir);
      assertTrue(Files.exists(victim.resolve("region-0")), "the clean-up deleted a file through a link");
      assertTrue(Files.isSymbolicLink(link), "the link itself is not an arena and stays");
    } finally {
      deleteVictim(victim);
    }
  }

  @Test
  void linksInsideAStaleArenaAreRemovedNotFollowed() throws Exception {
    Path victim = victim();
    try {
      Path stale = foreignArena(DEAD_PID, 0xe);
      Files.createSymbolicLink(stale.resolve("region-0"), victim.resolve("region-0"));
      Files.createSymbolicLink(stale.resolve("region-1"), victim);
      ShmArena.reclaimStale(shmDir);
      assertFalse(Files.exists(stale, java.nio.file.LinkOption.NOFOLLOW_LINKS), "the stale arena was kept");
      assertTrue(Files.exists(victim.resolve("region-0")), "the clean-up deleted a link's target");
      assertTrue(Files.exists(victim.resolve(ShmArena.OWNER_FILE)), "the clean-up walked into a linked folder");
    } finally {
      deleteVictim(victim);
    }
  }

  @Test
  void arenaOfAnotherUserOrModeIsLeftAlone() throws Exception {
    Path open = foreignArena(DEAD_PID, 0xf);
    Files.setPosixFilePermissions(open, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
    ShmArena.reclaimStale(shmDir);
    assertTrue(Files.exists(open.resolve(ShmArena.OWNER_FILE)), "a folder others may write was cleaned up");
    assumeTrue(ShmFiles.currentUid() == 0, "changing a folder's owner needs root");
    Path foreign = foreignArena(DEAD_PID + 2, 0x10);
    var nobody = shmDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
    Files.setOwner(foreign, nobody);
    ShmArena.reclaimStale(shmDir);
    assertTrue(Files.exists(foreign.resolve(ShmArena.OWNER_FILE)), "another user's folder was cleaned up");
  }

  /**
   * A local user swaps a stale arena for a link to another folder while the clean-up walks it, over
   * and over: nothing in the other folder is ever deleted.
   */
  @Test
  void arenaSwappedForALinkDuringTheCleanUpNeverReachesTheLinkTarget() throws Exception {
    Path victim = victim();
    try {
      for (int round = 0; round < 200; round++) {
        Path stale = foreignArena(DEAD_PID + 10 + round, 0x20);
        for (int i = 0; i < 20; i++) {
          Files.write(stale.resolve("region-" + (i + 1)), new byte[] {2});
        }
        Path aside = shmDir.resolve("aside-" + round);
        Thread swapper = new Thread(() -> {
          try {
            Files.move(stale, aside);
            Files.createSymbolicLink(stale, victim);
          } catch (IOException e) {
            // the clean-up removed it first: nothing to swap
          }
        });
        swapper.start();
        ShmArena.reclaimStale(shmDir);
        swapper.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(swapper.isAlive(), "round " + round + ": the swap did not finish");
        assertTrue(Files.exists(victim.resolve("region-0")), "round " + round + ": a file behind a link was deleted");
        assertTrue(Files.exists(victim.resolve(ShmArena.OWNER_FILE)), "round " + round + ": the link was followed");
        if (Files.isSymbolicLink(stale)) {
          Files.delete(stale);
        } else if (Files.exists(stale)) {
          ShmArena.deleteTree(stale);
        }
        if (Files.isDirectory(aside, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          ShmArena.deleteTree(aside);
        }
      }
    } finally {
      deleteVictim(victim);
    }
  }
}
