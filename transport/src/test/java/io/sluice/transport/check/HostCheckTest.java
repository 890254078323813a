package io.sluice.transport.check;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice-check} on a host described by files (an RDMA device's sysfs entries, a limits
 * file), and against a real {@code --serve} on loopback.
 */
class HostCheckTest {
  private static final String SECRET = "host-check-test-secret-0123456789";

  @TempDir
  Path dir;

  private record Outcome(int status, String out, String err) {}

  private Outcome run(HostCheck.Host host, Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = HostCheck.run(args, env, host, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Outcome(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /**
   * A host with one RoCE device whose port is in {@code state}, a memlock limit of {@code
   * memlockKib}, and a process without CAP_IPC_LOCK.
   */
  private HostCheck.Host host(String state, long memlockKib) throws Exception {
    return host(state, memlockKib, "0000000000000000");
  }

  /** As above, with the effective capabilities {@code capEff} (hex, as /proc/self/status shows them). */
  private HostCheck.Host host(String state, long memlockKib, String capEff) throws Exception {
    Path port = dir.resolve("sys/mlx5_0/ports/1");
    Files.createDirectories(port.resolve("gids"));
    Files.createDirectories(port.resolve("gid_attrs/ndevs"));
    Files.createDirectories(port.resolve("gid_attrs/types"));
    Files.writeString(port.resolve("state"), state + "\n");
    Files.writeString(port.resolve("link_layer"), "Ethernet\n");
    Files.writeString(port.resolve("gids/0"), "fe80:0000:0000:0000:0000:0000:0000:0001\n");
    Files.writeString(port.resolve("gids/1"), "0000:0000:0000:0000:0000:0000:0000:0000\n");
    Files.writeString(port.resolve("gid_attrs/ndevs/0"), "lo\n");
    Files.writeString(port.resolve("gid_attrs/types/0"), "RoCE v2\n");
    Path limits = dir.resolve("limits");
    Files.writeString(limits, "Limit                     Soft Limit           Hard Limit           Units\n"
        + "Max locked memory         " + memlockKib * 1024 + "              " + memlockKib * 1024 + "              bytes\n");
    Path status = dir.resolve("status");
    Files.writeString(status, "Name:\tjava\nCapInh:\t0000000000000000\nCapPrm:\t" + capEff + "\nCapEff:\t" + capEff
        + "\nCapBnd:\t000001ffffffffff\n");
    return new HostCheck.Host(dir.resolve("sys"), limits, status);
  }

  @Test
  void aLowMemlockLimitIsNoProblemForAProcessHoldingIpcLock() throws Exception {
    // 0x4000: CAP_IPC_LOCK alone; 0x000001ffffffffff: every capability, as root has.
    for (String caps : new String[] {"0000000000004000", "000001ffffffffff"}) {
      Outcome o = run(host("1: DOWN", 64, caps), Map.of(), "--conf", "sluice.transport.bindHost=127.0.0.1");
      assertTrue(o.out.contains("[ok] memlock    locked-memory limit 64.0 KiB, verbs registers 96.0 MiB; not applied"
          + " to this process, which holds CAP_IPC_LOCK"), o.out);
      assertTrue(!o.out.contains("not verbs: the verbs provider is not on the class path; no RDMA port is ACTIVE;"
          + " locked-memory"), o.out);
    }
    // Every capability but CAP_IPC_LOCK.
    Outcome o = run(host("1: DOWN", 64, "000001ffffffbfff"), Map.of(), "--conf", "sluice.transport.bindHost=127.0.0.1");
    assertTrue(o.out.contains("[!!] memlock    locked-memory limit 64.0 KiB"), o.out);
  }

  @Test
  void autoRunsOnTcpAndSaysWhyNotVerbsWithAFixForEachProblem() throws Exception {
    Outcome o = run(host("1: DOWN", 64), Map.of(), "--conf", "sluice.transport.bindHost=127.0.0.1");
    assertEquals(0, o.status, o.out + o.err);
    assertTrue(o.out.contains("[ok] tcp        can listen on 127.0.0.1"), o.out);
    assertTrue(o.out.contains("[!!] port       mlx5_0 port 1: 1: DOWN, Ethernet, GID 0 RoCE v2 on lo"), o.out);
    assertTrue(o.out.contains("[!!] memlock    locked-memory limit 64.0 KiB, verbs registers 96.0 MiB"), o.out);
    assertTrue(o.out.contains("fix: raise it for the service's user"), o.out);
    assertTrue(o.out.contains("auto would choose: tcp"), o.out);
    assertTrue(o.out.contains("not verbs: the verbs provider is not on the class path; no RDMA port is ACTIVE;"
        + " locked-memory limit 64.0 KiB"), o.out);
    assertTrue(o.out.endsWith("result: OK" + System.lineSeparator()), o.out);
    // Every problem line is followed by its fix.
    String[] lines = o.out.split(System.lineSeparator());
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains("[!!]")) {
        assertTrue(lines[i + 1].trim().startsWith("fix: "), lines[i]);
      }
    }
  }

  @Test
  void aConfiguredProviderThatCannotRunFailsTheCheck() throws Exception {
    Outcome o = run(host("4: ACTIVE", 1 << 30), Map.of(), "--conf", "sluice.transport.provider=verbs");
    assertEquals(1, o.status, o.out);
    assertTrue(o.out.contains("[ok] port       mlx5_0 port 1: 4: ACTIVE"), o.out);
    assertTrue(o.out.contains("[ok] memlock    locked-memory limit 1.0 TiB"), o.out);
    assertTrue(o.out.contains("result: FAILED: provider verbs cannot run here"), o.out);
  }

  @Test
  void aTooSmallShmDirectoryIsAProblemForShmOnly() throws Exception {
    Outcome o = run(host("4: ACTIVE", 1 << 30), Map.of(), "--needs", "1000t",
        "--conf", "sluice.transport.shm.dir=" + dir, "--conf", "sluice.transport.provider=shm");
    assertEquals(1, o.status, o.out);
    assertTrue(o.out.contains("[!!] shm        " + dir + ": "), o.out);
    assertTrue(o.out.contains("fix: enlarge it"), o.out);
    assertTrue(o.out.contains("same-host peers over tcp too"), o.out);
  }

  @Test
  void badCommandLinesAreRefusedWithTheReason() throws Exception {
    HostCheck.Host h = host("4: ACTIVE", 64);
    assertEquals("sluice-check: unknown argument '--bogus'", firstLine(run(h, Map.of(), "--bogus").err));
    assertEquals("sluice-check: --conf takes KEY=VALUE, got 'novalue'",
        firstLine(run(h, Map.of(), "--conf", "novalue").err));
    assertEquals("sluice-check: --peer needs a value", firstLine(run(h, Map.of(), "--peer").err));
    Outcome size = run(h, Map.of(), "--needs", "lots");
    assertEquals(2, size.status);
    assertTrue(size.err.contains("lots"), size.err);
    // The environment variable older releases read still works.
    Outcome both = run(h, Map.of("SLUICE_TRANSPORT_SECRET", SECRET), "--serve", "--peer", "127.0.0.1:1");
    assertEquals("sluice-check: --serve and --peer are for two different hosts; give one", firstLine(both.err));
    Outcome noSecret = run(h, Map.of(), "--peer", "127.0.0.1:1");
    assertTrue(noSecret.err.contains("need the transport secret"), noSecret.err);
    Outcome typo = run(h, Map.of(), "--conf", "sluice.transport.provder=tcp");
    assertEquals(2, typo.status);
    assertTrue(typo.err.contains("sluice.transport.provider"), typo.err);
  }

  private static String firstLine(String s) {
    return s.split(System.lineSeparator())[0];
  }

  @Test
  void aPeerRunningServeIsReadAndAWrongSecretIsNamed() throws Exception {
    HostCheck.Host h = host("4: ACTIVE", 1 << 30);
    TransportConfig serving = TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
        "sluice.transport.secret", SECRET, "sluice.transport.bindHost", "127.0.0.1",
        "sluice.transport.advertiseHost", "127.0.0.1"));
    try (HostCheck.Server server = HostCheck.Server.start(serving)) {
      String peer = server.transport.localAddress().toString();
      Outcome o = run(h, Map.of(), "--peer", peer, "--secret-file", secretFile(SECRET + "\n", "rw-------").toString(),
          "--conf", "sluice.transport.provider=tcp", "--conf", "sluice.transport.bindHost=127.0.0.1");
      assertEquals(0, o.status, o.out + o.err);
      assertTrue(o.out.contains("[ok] peer       READ 1.0 MiB from " + peer + " over tcp (provider tcp)"), o.out);
      Outcome wrong = run(h, Map.of("SLUICE_SECRET", "another-secret-of-enough-length"), "--peer", peer,
          "--conf", "sluice.transport.provider=tcp", "--conf", "sluice.transport.bindHost=127.0.0.1");
      assertEquals(1, wrong.status, wrong.out);
      assertTrue(wrong.out.contains("fix: give both hosts the same secret"), wrong.out);
      assertTrue(wrong.out.contains("result: FAILED: the peer check failed"), wrong.out);
    }
  }

  /** A file holding {@code text} with {@code permissions} (as ls shows them: rw-------). */
  private Path secretFile(String text, String permissions) throws Exception {
    Path f = dir.resolve("secret-" + permissions);
    Files.writeString(f, text);
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(permissions));
    return f;
  }

  @Test
  void serveListensOnLoopbackUnlessGivenAnAddress() {
    Map<String, String> env = Map.of("SLUICE_SECRET", SECRET);
    HostCheck.Options serve = HostCheck.Options.parse(new String[] {"--serve"}, env);
    assertEquals("127.0.0.1", serve.config().value(TransportKeys.BIND_HOST));
    HostCheck.Options asked = HostCheck.Options.parse(
        new String[] {"--serve", "--conf", "sluice.transport.bindHost=0.0.0.0"}, env);
    assertEquals("0.0.0.0", asked.config().value(TransportKeys.BIND_HOST));
  }

  @Test
  void serveStopsByItselfAfterItsDeadline() throws Exception {
    HostCheck.Host h = host("4: ACTIVE", 1 << 30);
    // The deadline is what ends this run: nothing else stops it.
    CompletableFuture<Outcome> serving = CompletableFuture.supplyAsync(() -> run(h, Map.of("SLUICE_SECRET", SECRET),
        "--serve", "--serve-for", "1s", "--conf", "sluice.transport.provider=tcp"));
    Outcome o = serving.get(Eventually.DEADLINE.toSeconds(), TimeUnit.SECONDS);
    assertEquals(0, o.status, o.out + o.err);
    assertTrue(o.out.contains("listening on 127.0.0.1:"), o.out);
    assertTrue(o.out.contains(" for 1s (until "), o.out);
    assertTrue(o.out.contains("  bin/sluice-check --peer 127.0.0.1:"), o.out);
    assertTrue(o.out.endsWith("sluice-check --serve: served for 1s; stopped" + System.lineSeparator()), o.out);
  }

  @Test
  void theSecretIsRefusedOnTheCommandLine() throws Exception {
    HostCheck.Host h = host("4: ACTIVE", 1 << 30);
    for (String[] args : new String[][] {{"--conf", "sluice.transport.secret=" + SECRET},
        {"--serve", "--conf", " sluice.transport.secret = " + SECRET}}) {
      Outcome o = run(h, Map.of(), args);
      assertEquals(2, o.status, o.out + o.err);
      assertTrue(firstLine(o.err).contains("does not go on the command line"), o.err);
      assertTrue(o.err.contains("--secret-file FILE") && o.err.contains("SLUICE_SECRET"), o.err);
      assertFalse(o.out.contains(SECRET) || o.err.contains(SECRET), "the secret was echoed");
    }
  }

  @Test
  void aSecretFileOthersMayReadIsRefused() throws Exception {
    HostCheck.Host h = host("4: ACTIVE", 1 << 30);
    for (String open : new String[] {"rw-r--r--", "rw-r-----", "rw-----w-"}) {
      Path f = secretFile(SECRET + "\n", open);
      Outcome o = run(h, Map.of(), "--peer", "127.0.0.1:1", "--secret-file", f.toString());
      assertEquals(2, o.status, o.out + o.err);
      assertTrue(firstLine(o.err).contains("permissions " + open + " are too open"), o.err);
      assertTrue(o.err.contains("chmod 600 " + f), o.err);
      assertFalse(o.out.contains(SECRET) || o.err.contains(SECRET), "the secret was echoed");
    }
    Path empty = secretFile("\n", "rw-------");
    assertTrue(firstLine(run(h, Map.of(), "--serve", "--secret-file", empty.toString()).err).endsWith(" is empty"));
    // An owner-only file is read, without its last newline, and counts before the environment.
    Path ok = secretFile(SECRET + "\n", "rw-------");
    HostCheck.Options o = HostCheck.Options.parse(new String[] {"--serve", "--secret-file", ok.toString()},
        Map.of("SLUICE_SECRET", "another-secret-of-enough-length"));
    assertEquals(SECRET, o.config().value(TransportKeys.SECRET));
  }
}
