package io.sluice.transport.check;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.Transports;
import io.sluice.transport.config.Parsers;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.crypto.Curves;
import io.sluice.transport.crypto.EngineChoice;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code bin/sluice-check}: whether this host can run the configured transport provider, which one
 * {@code auto} would choose, why not the others, and the fix for each problem in one line; with
 * {@code --peer} it also connects to another host's {@code --serve} and READs from it. Everything
 * but the peer check reads /sys, /proc and the file system, so it answers in well under a second
 * on a host without RDMA. Exit status: 0 when the configured provider can run (and the peer was
 * read), 1 when not, 2 for a bad command line.
 *
 * <p>A --serve listens on loopback unless told an address and stops by itself after {@code
 * --serve-for}, so one left running is no lasting open door. The secret never comes from the
 * command line, which every user of the host can read in the process list: from a file only its
 * owner can read ({@link SecretFile}) or from the environment.
 */
public final class HostCheck {
  /** How long a --serve serves unless told otherwise. */
  static final String DEFAULT_SERVE_FOR = "10m";
  /** Where --serve listens unless {@code sluice.transport.bindHost} says otherwise: this host only. */
  static final String SERVE_BIND_HOST = "127.0.0.1";
  /** The environment variable the secret is read from, and the one older releases read. */
  static final String SECRET_ENV = "SLUICE_SECRET";
  static final String OLD_SECRET_ENV = "SLUICE_TRANSPORT_SECRET";
  static final String USAGE = String.join(System.lineSeparator(),
      "usage: sluice-check [--conf KEY=VALUE]... [--needs SIZE] [--secret-file FILE]",
      "                    [--peer HOST:PORT | --serve [--serve-for DURATION]]",
      "  --conf KEY=VALUE      a transport setting (sluice.transport.*), as the application sets it; not the secret",
      "  --needs SIZE          registered memory the application keeps (default 96m: Spark shuffle's READ",
      "                        destinations, 2 x spark.shuffle.rdma.maxBytesInFlight); memlock and shm must hold it",
      "  --serve               listen with the configured provider and serve a test region; prints the address",
      "                        to give --peer on another host. Listens on 127.0.0.1 unless given",
      "                        --conf sluice.transport.bindHost=ADDRESS (one the other host reaches)",
      "  --serve-for DURATION  how long --serve serves before it stops by itself (default " + DEFAULT_SERVE_FOR
          + "; 30s, 1h, ...)",
      "  --peer HOST:PORT      connect to a --serve there (same secret) and READ its test region",
      "  --secret-file FILE    read the secret from FILE, which only its owner may read (chmod 600 FILE)",
      "  the secret comes from --secret-file, else $" + SECRET_ENV + " (or the older $" + OLD_SECRET_ENV + "),",
      "  never from the command line, where every user of the host can read it");
  /** Bytes of the region --serve offers and --peer READs. */
  static final int TEST_REGION_BYTES = 1 << 20;

  /**
   * Where the host's facts are read: /sys/class/infiniband, /proc/self/limits and
   * /proc/self/status (for the process's capabilities); tests point elsewhere.
   */
  record Host(Path rdmaDevices, Path limits, Path status) {
    static final Host THIS = new Host(Path.of("/sys/class/infiniband"), Path.of("/proc/self/limits"),
        Path.of("/proc/self/status"));
  }

  /** The command line, checked; {@code serveForMillis} is how long a --serve serves. */
  record Options(TransportConfig config, long needsBytes, Optional<NodeAddress> peer, boolean serve,
      long serveForMillis, boolean help) {
    static Options parse(String[] args, Map<String, String> env) {
      Map<String, String> conf = new LinkedHashMap<>();
      long needs = Parsers.bytes().parse("96m");
      long serveFor = Parsers.duration(TimeUnit.MILLISECONDS).parse(DEFAULT_SERVE_FOR);
      boolean serveForGiven = false;
      Optional<Path> secretFile = Optional.empty();
      Optional<NodeAddress> peer = Optional.empty();
      boolean serve = false;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        switch (a) {
          case "--help", "-h" -> {
            return new Options(TransportConfig.of(conf), needs, peer, false, serveFor, true);
          }
          case "--serve" -> serve = true;
          case "--conf" -> {
            String kv = value(args, ++i, a);
            int eq = kv.indexOf('=');
            if (eq <= 0) {
              throw new IllegalArgumentException("--conf takes KEY=VALUE, got '" + kv + "'");
            }
            String key = kv.substring(0, eq).trim();
            if (key.equals(TransportKeys.SECRET.key())) {
              throw new IllegalArgumentException("the secret does not go on the command line, where every user"
                  + " of this host can read it (ps): put it in a file only you can read and give --secret-file"
                  + " FILE, or set " + SECRET_ENV + " in the environment");
            }
            conf.put(key, kv.substring(eq + 1).trim());
          }
          case "--needs" -> {
            String size = value(args, ++i, a);
            try {
              needs = Parsers.bytes().parse(size);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException("--needs '" + size + "': " + e.getMessage(), e);
            }
          }
          case "--serve-for" -> {
            String duration = value(args, ++i, a);
            try {
              serveFor = Parsers.duration(TimeUnit.MILLISECONDS).parse(duration);
            } catch (IllegalArgumentException e) {
              throw new IllegalArgumentException("--serve-for '" + duration + "': " + e.getMessage(), e);
            }
            if (serveFor <= 0) {
              throw new IllegalArgumentException("--serve-for '" + duration + "': must be positive");
            }
            serveForGiven = true;
          }
          case "--secret-file" -> secretFile = Optional.of(Path.of(value(args, ++i, a)));
          case "--peer" -> peer = Optional.of(NodeAddress.parse(value(args, ++i, a)));
          default -> throw new IllegalArgumentException("unknown argument '" + a + "'");
        }
      }
      if (serve && peer.isPresent()) {
        throw new IllegalArgumentException("--serve and --peer are for two different hosts; give one");
      }
      if (serveForGiven && !serve) {
        throw new IllegalArgumentException("--serve-for goes with --serve");
      }
      if (serve) {
        conf.putIfAbsent(TransportKeys.BIND_HOST.key(), SERVE_BIND_HOST);
      }
      List<String> unknown = Transports.unknownKeys(conf.keySet());
      if (!unknown.isEmpty()) {
        throw new IllegalArgumentException(String.join("; ", unknown));
      }
      secret(secretFile, env).ifPresent(s -> conf.put(TransportKeys.SECRET.key(), s));
      TransportConfig config = TransportConfig.of(conf);
      Transports.validate(config);
      if ((serve || peer.isPresent()) && config.value(TransportKeys.SECRET).isEmpty()) {
        throw new IllegalArgumentException("--serve and --peer need the transport secret, the same on both hosts:"
            + " --secret-file FILE (a file only you can read) or " + SECRET_ENV + " in the environment");
      }
      return new Options(config, needs, peer, serve, serveFor, false);
    }

    /** The secret: from {@code file} when given, else from the environment. */
    private static Optional<String> secret(Optional<Path> file, Map<String, String> env) {
      if (file.isPresent()) {
        return Optional.of(SecretFile.read(file.get()));
      }
      for (String name : List.of(SECRET_ENV, OLD_SECRET_ENV)) {
        String secret = env.get(name);
        if (secret != null && !secret.isEmpty()) {
          return Optional.of(secret);
        }
      }
      return Optional.empty();
    }

    private static String value(String[] args, int i, String option) {
      if (i >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }
  }

  private HostCheck() {}

  /**
   * Runs the check on this host with this process's environment, printing to stdout and stderr;
   * returns the exit status. The program is bin/lib/SluiceCheck.java (shipped jars hold no programs).
   */
  public static int run(String[] args) {
    return run(args, System.getenv(), Host.THIS, System.out, System.err);
  }

  /** Runs the check; returns the exit status. */
  static int run(String[] args, Map<String, String> env, Host host, PrintStream out, PrintStream err) {
    Options o;
    try {
      o = Options.parse(args, env);
    } catch (IllegalArgumentException e) {
      err.println("sluice-check: " + e.getMessage());
      err.println(USAGE);
      return 2;
    }
    if (o.help()) {
      out.println(USAGE);
      return 0;
    }
    if (o.serve()) {
      try (Server s = Server.start(o.config())) {
        String bound = o.config().value(TransportKeys.BIND_HOST) + ":" + s.transport.localAddress().port();
        String lasts = duration(o.serveForMillis());
        out.println("sluice-check --serve: provider " + s.transport.provider() + ", listening on " + bound
            + " for " + lasts + " (until " + LocalTime.now().plus(Duration.ofMillis(o.serveForMillis()))
                .truncatedTo(ChronoUnit.SECONDS) + "; --serve-for), then it stops; on the other host run:");
        out.println("  bin/sluice-check --peer " + s.transport.localAddress() + " (with the same secret)");
        if (InetAddress.getByName(o.config().value(TransportKeys.BIND_HOST)).isLoopbackAddress()) {
          out.println("  (this host only: for another host, --conf " + TransportKeys.BIND_HOST.key()
              + "=ADDRESS of this host that it reaches)");
        }
        out.flush();
        if (!s.awaitClose(o.serveForMillis())) {
          out.println("sluice-check --serve: served for " + lasts + "; stopped");
        }
        return 0;
      } catch (IOException e) {
        err.println("sluice-check --serve: " + e.getMessage());
        return 1;
      }
    }
    Verdict v = check(o, host);
    out.println("sluice-check on " + localName() + ": configured provider " + v.configured + " ("
        + TransportKeys.PROVIDER.key() + ")");
    v.findings.forEach(f -> out.println(f.render()));
    out.println(v.choice);
    boolean peerOk = true;
    if (o.peer().isPresent()) {
      Finding f = readPeer(o.config(), o.peer().get());
      out.println(f.render());
      peerOk = f.ok();
    }
    boolean ok = v.configuredRuns && peerOk;
    out.println(ok ? "result: OK" : "result: FAILED: " + (v.configuredRuns ? "the peer check failed"
        : "provider " + v.configured + " cannot run here"));
    return ok ? 0 : 1;
  }

  private static String localName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "this host";
    }
  }

  /** What the check found: a line per subject, the choice auto would make, and whether the configured provider runs. */
  record Verdict(String configured, List<Finding> findings, String choice, boolean configuredRuns) {}

  static Verdict check(Options o, Host host) {
    TransportConfig config = o.config();
    List<Finding> findings = new ArrayList<>();
    Map<String, Optional<String>> cannot = new HashMap<>(); // provider -> why it cannot run here

    Finding listen = listenCheck(config);
    findings.add(listen);
    cannot.put("tcp", listen.ok() ? Optional.empty() : Optional.of(listen.detail()));

    Finding encryption = encryptionCheck(config);
    findings.add(encryption);
    if (!encryption.ok()) {
      cannot.put("tcp", Optional.of(encryption.detail()));
    }

    Finding shm = shmCheck(config, o.needsBytes());
    findings.add(shm);
    boolean shmOn = config.value(TransportKeys.SHM_ENABLED);
    cannot.put("shm", !shm.ok() ? Optional.of(shm.detail()) : !shmOn ? Optional.of("shm is disabled ("
        + TransportKeys.SHM_ENABLED.key() + "=false)") : cannot.get("tcp"));

    Map<String, TransportProvider> providers = new LinkedHashMap<>();
    for (TransportProvider p : Transports.providers()) {
      providers.put(p.name(), p);
    }
    List<String> verbsProblems = new ArrayList<>();
    if (!providers.containsKey("verbs")) {
      findings.add(Finding.problem("verbs", "the verbs provider is not on the class path",
          "use the shipped jar that holds sluice-transport-verbs (the Spark shuffle jar does)"));
      verbsProblems.add("the verbs provider is not on the class path");
    } else {
      Optional<Throwable> why = providers.get("verbs").unavailabilityCause();
      if (why.isPresent()) {
        String message = why.get().getMessage();
        findings.add(Finding.problem("verbs", message, verbsFix(message)));
        verbsProblems.add(message);
      } else {
        findings.add(Finding.ok("verbs", "the native library loads and a device has an active port"));
      }
    }
    List<HostFacts.Port> ports = HostFacts.ports(host.rdmaDevices());
    findings.addAll(deviceFindings(ports, config, verbsProblems));
    Finding memlock = memlockCheck(host, o.needsBytes());
    findings.add(memlock);
    if (!memlock.ok()) {
      verbsProblems.add(memlock.detail());
    }
    cannot.put("verbs", verbsProblems.isEmpty() ? cannot.get("tcp") : Optional.of(String.join("; ", verbsProblems)));

    String configured = config.value(TransportKeys.PROVIDER);
    String chosen = cannot.get("verbs").isEmpty() ? "verbs" : cannot.get("tcp").isEmpty() ? "tcp" : "none";
    StringBuilder choice = new StringBuilder("auto would choose: ").append(chosen);
    if (chosen.equals("tcp")) {
      choice.append(cannot.get("shm").isEmpty() ? " (same-host peers read through shm)"
          : " (same-host peers over tcp too: " + cannot.get("shm").get() + ")");
      choice.append("; not verbs: ").append(cannot.get("verbs").orElse("?"));
    }
    boolean runs = configured.equals("auto") ? !chosen.equals("none")
        : cannot.getOrDefault(configured, Optional.of("unknown provider")).isEmpty();
    return new Verdict(configured, findings, choice.toString(), runs);
  }

  private static Finding listenCheck(TransportConfig config) {
    String host = config.value(TransportKeys.BIND_HOST);
    int port = config.value(TransportKeys.PORT);
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(host, port));
      return Finding.ok("tcp", "can listen on " + host + (port == 0 ? " (any free port)" : ":" + port));
    } catch (IOException e) {
      return Finding.problem("tcp", "cannot listen on " + host + ":" + port + ": " + e.getMessage(),
          "set " + TransportKeys.BIND_HOST.key() + " to an address of this host and "
              + TransportKeys.PORT.key() + " to a free port (0: any)");
    }
  }

  /**
   * The AES-GCM engine a transport opened here would seal and open encrypted connections with, and
   * the implementation of the handshake's curves ({@link Curves}).
   */
  private static Finding encryptionCheck(TransportConfig config) {
    String asked = config.value(TransportKeys.ENCRYPTION_ENGINE);
    String mode = config.value(TransportKeys.ENCRYPTION) ? "encryption on" : "encryption off, used for peers that ask";
    try {
      EngineChoice c = EngineChoice.choose(asked);
      Curves.chosen(); // every handshake needs them, encrypted or not
      return Finding.ok("encryption", "AES-GCM engine " + c.engine().id() + " (" + c.engine().description() + "; "
          + c.reason() + "; " + mode + "); handshake X25519 and Ed25519 by " + Curves.description());
    } catch (IllegalStateException | IllegalArgumentException e) {
      return Finding.problem("encryption", e.getMessage(), "install OpenSSL's libcrypto (Debian: libssl3), or set "
          + TransportKeys.ENCRYPTION_ENGINE.key() + "=auto and leave -D" + Curves.PROPERTY + " unset (auto)");
    }
  }

  private static Finding shmCheck(TransportConfig config, long needs) {
    Path dir = Path.of(config.value(TransportKeys.SHM_DIR));
    if (!config.value(TransportKeys.SHM_ENABLED)) {
      return Finding.ok("shm", "disabled (" + TransportKeys.SHM_ENABLED.key() + "=false)");
    }
    OptionalLong free = HostFacts.freeBytes(dir);
    if (free.isEmpty()) {
      return Finding.problem("shm", dir + " does not exist", "mount a tmpfs there (mount -t tmpfs tmpfs " + dir
          + ") or set " + TransportKeys.SHM_DIR.key() + " to one");
    }
    String detail = dir + ": " + size(free.getAsLong()) + " free, " + size(needs) + " needed";
    if (free.getAsLong() < needs) {
      return Finding.problem("shm", detail, "enlarge it: mount -o remount,size=<bytes> " + dir
          + " (docker: --shm-size, Kubernetes: an emptyDir with medium Memory)");
    }
    return Finding.ok("shm", detail);
  }

  private static String verbsFix(String cause) {
    String c = cause.toLowerCase(Locale.ROOT);
    if (c.contains("library")) {
      return "install rdma-core's libibverbs and librdmacm (apt install ibverbs-providers librdmacm1) and start"
          + " the JVM with the flag the message names, if it names one";
    }
    if (c.contains("listing rdma devices failed")) {
      return "libibverbs cannot list devices: install the NIC's provider library (ibverbs-providers) and load"
          + " its kernel driver; ibv_devices must list the device";
    }
    if (c.contains("no rdma device")) {
      return "load the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re...) or add Soft-RoCE: rdma link add rxe0 type rxe"
          + " netdev <interface>";
    }
    if (c.contains("active")) {
      return "bring the port up: ip link set <interface> up, and check the link (ibv_devinfo, the switch port)";
    }
    return "see the message; ibv_devinfo shows what libibverbs sees";
  }

  /** The devices' ports, their state and GIDs, and whether the configured address belongs to one. */
  private static List<Finding> deviceFindings(List<HostFacts.Port> ports, TransportConfig config,
      List<String> verbsProblems) {
    List<Finding> findings = new ArrayList<>();
    if (ports.isEmpty()) {
      findings.add(Finding.problem("devices", "no RDMA device under /sys/class/infiniband",
          "none needed for tcp and shm; for verbs load the NIC's RDMA driver or add Soft-RoCE"
              + " (rdma link add rxe0 type rxe netdev <interface>)"));
      return findings;
    }
    if (ports.stream().noneMatch(HostFacts.Port::active)) {
      verbsProblems.add("no RDMA port is ACTIVE");
    }
    List<InetAddress> rdmaAddresses = new ArrayList<>();
    for (HostFacts.Port p : ports) {
      StringBuilder gids = new StringBuilder();
      for (HostFacts.Gid g : p.gids()) {
        List<InetAddress> addresses = g.netdev().map(HostFacts::addresses).orElse(List.of());
        rdmaAddresses.addAll(addresses);
        gids.append(gids.length() == 0 ? "" : "; ").append("GID ").append(g.index()).append(' ')
            .append(g.type().isEmpty() ? "" : g.type() + " ").append(g.netdev().map(n -> "on " + n).orElse(""))
            .append(addresses.isEmpty() ? "" : " " + addresses.stream().map(InetAddress::getHostAddress).toList());
      }
      String detail = p.device() + " port " + p.number() + ": " + p.state() + ", " + p.linkLayer()
          + (gids.length() == 0 ? ", no GID" : ", " + gids);
      findings.add(p.active() ? Finding.ok("port", detail)
          : Finding.problem("port", detail, "bring it up: ip link set <interface> up; ibv_devinfo shows its state"));
    }
    String address = config.get("sluice.transport.verbs.deviceAddress").orElse("");
    if (!address.isEmpty()) {
      boolean ours = rdmaAddresses.stream().anyMatch(a -> a.getHostAddress().equals(address));
      findings.add(ours ? Finding.ok("address", address + " belongs to an RDMA device's interface")
          : Finding.problem("address", address + " is not an address of any RDMA device's interface "
              + rdmaAddresses.stream().map(InetAddress::getHostAddress).toList(),
              "set sluice.transport.verbs.deviceAddress to one of those, or leave it empty"));
      if (!ours) {
        verbsProblems.add("deviceAddress " + address + " is on no RDMA interface");
      }
    }
    return findings;
  }

  /**
   * The locked-memory limit against what verbs registers. The kernel does not apply the limit to
   * registrations of a process that holds CAP_IPC_LOCK (root, as a rule), so a low limit is no
   * problem for this process then; the detail says so, since a service run under another user
   * may not hold it.
   */
  private static Finding memlockCheck(Host host, long needs) {
    Path limits = host.limits();
    if (!HostFacts.memlockReadable(limits)) {
      return Finding.ok("memlock", "limit unknown (" + limits + " unreadable)");
    }
    OptionalLong limit = HostFacts.memlockBytes(limits);
    if (limit.isEmpty()) {
      return Finding.ok("memlock", "unlimited");
    }
    String detail = "locked-memory limit " + size(limit.getAsLong()) + ", verbs registers " + size(needs);
    if (limit.getAsLong() >= needs) {
      return Finding.ok("memlock", detail);
    }
    if (HostFacts.holdsIpcLock(host.status())) {
      return Finding.ok("memlock", detail + "; not applied to this process, which holds CAP_IPC_LOCK (a service"
          + " run without it needs the limit raised)");
    }
    return Finding.problem("memlock", detail, "raise it for the service's user: '* - memlock unlimited' in"
        + " /etc/security/limits.conf, LimitMEMLOCK=infinity (systemd), --ulimit memlock=-1 (docker)");
  }


  static String size(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  /** {@code millis} as a person writes it: 10m, 90s, 1500ms. */
  static String duration(long millis) {
    if (millis % 60_000 == 0) {
      return millis / 60_000 + "m";
    }
    return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
  }

  /** Connects to a --serve, asks for its test region and READs it all; the finding says how it went. */
  static Finding readPeer(TransportConfig config, NodeAddress peer) {
    long started = System.nanoTime();
    try (Transport t = Transports.open(config.with(Map.of(TransportKeys.PORT.key(), "0")), MessageHandler.REJECT_ALL);
         Connection c = t.connect(peer).get(config.value(TransportKeys.CONNECT_TIMEOUT_MS), TimeUnit.MILLISECONDS);
         RegisteredRegion into = t.allocate(TEST_REGION_BYTES)) {
      long timeout = config.value(TransportKeys.IO_TIMEOUT_MS);
      ByteBuffer answer = c.request(ByteBuffer.allocate(0)).get(timeout, TimeUnit.MILLISECONDS);
      RemoteDescriptor d = RemoteDescriptor.decode(answer);
      c.read(d, 0, into, 0, TEST_REGION_BYTES).get(timeout, TimeUnit.MILLISECONDS);
      for (int i = 0; i < TEST_REGION_BYTES; i++) {
        if (into.buffer().get(i) != pattern(i)) {
          return Finding.problem("peer", "READ from " + peer + " returned wrong bytes at offset " + i,
              "report this: the transport handed back bytes the peer did not write");
        }
      }
      return Finding.ok("peer", "READ " + size(TEST_REGION_BYTES) + " from " + peer + " over " + c.dataPath(d)
          + " (provider " + t.provider() + ") in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
          + " ms, connect included");
    } catch (ExecutionException e) {
      return peerProblem(peer, e.getCause());
    } catch (TransportException | TimeoutException | RuntimeException e) {
      return peerProblem(peer, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return peerProblem(peer, e);
    }
  }

  private static Finding peerProblem(NodeAddress peer, Throwable e) {
    String what = e.getClass().getSimpleName() + ": " + e.getMessage();
    String fix;
    if (e instanceof java.net.ConnectException || String.valueOf(e.getMessage()).contains("refused")) {
      fix = "start bin/sluice-check --serve on " + peer.host() + " and let this host reach its port (firewall)";
    } else if (e instanceof io.sluice.transport.AuthenticationFailedException) {
      fix = "give both hosts the same secret";
    } else if (e instanceof TimeoutException || e instanceof io.sluice.transport.TransportTimeoutException) {
      fix = "the peer does not answer in time: check routes and firewalls (and for verbs, that rdma_cm"
          + " reaches it: rping -c -a " + peer.host() + ")";
    } else {
      fix = "for verbs, check that rdma_cm reaches the peer (rping -s there, rping -c -a " + peer.host()
          + " here) and that both use addresses of their RDMA interfaces";
    }
    return Finding.problem("peer", "cannot READ from " + peer + ": " + what, fix);
  }

  static byte pattern(int i) {
    return (byte) (i * 31 + 7);
  }

  /** A --serve: a transport with one region of known bytes, whose descriptor it hands to anyone who asks. */
  static final class Server implements AutoCloseable {
    final Transport transport;
    private final RegisteredRegion region;
    private final CountDownLatch closed = new CountDownLatch(1);

    private Server(Transport transport, RegisteredRegion region) {
      this.transport = transport;
      this.region = region;
    }

    static Server start(TransportConfig config) throws TransportException {
      CompletableFuture<RemoteDescriptor> offered = new CompletableFuture<>();
      Transport t = Transports.open(config, (peer, request) -> offered.thenApply(d -> ByteBuffer.wrap(d.toBytes())));
      try {
        RegisteredRegion region = t.allocate(TEST_REGION_BYTES);
        for (int i = 0; i < TEST_REGION_BYTES; i++) {
          region.buffer().put(i, pattern(i));
        }
        offered.complete(region.descriptor());
        return new Server(t, region);
      } catch (TransportException | RuntimeException e) {
        t.close();
        throw e;
      }
    }

    /**
     * Blocks until closed, interrupted, or {@code millis} have passed, whichever comes first.
     *
     * @return false if the time was up
     */
    boolean awaitClose(long millis) {
      try {
        return closed.await(millis, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }

    @Override
    public void close() {
      closed.countDown();
      region.close();
      transport.close();
    }
  }
}
