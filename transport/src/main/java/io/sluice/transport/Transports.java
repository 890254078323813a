package io.sluice.transport;

import io.sluice.transport.carrier.Rehearsal;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.ConfigSource;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.Curves;
import io.sluice.transport.crypto.EngineChoice;
import io.sluice.transport.handshake.Handshake;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Entry point: opens a {@link Transport} with the provider the configuration asks for. With
 * {@code auto}, verbs when it is available, else tcp (which reads same-host peers through shm);
 * the choice and its reason go to the log in one line.
 */
public final class Transports {
  private static final Logger LOG = LoggerFactory.getLogger(Transports.class);
  /**
   * What an opening transport rehearses: by default the first one of a JVM a whole connection
   * ({@link #rehearseConnection}), which runs the handshake too; with {@code
   * -Dsluice.transport.rehearseAtOpen=memory} every open a handshake in memory only ({@link
   * Rehearsal#run}); with {@code false} nothing. The last two are there to measure what each buys.
   */
  private static final String REHEARSAL = System.getProperty("sluice.transport.rehearseAtOpen", "true");
  private static final boolean REHEARSE_IN_MEMORY = "memory".equals(REHEARSAL);
  /**
   * How the JVM's connection rehearsal ended, once it has: {@code rehearsed over <data path>},
   * {@code failed: <why>}, or {@code off}. For tests.
   */
  static final java.util.concurrent.CompletableFuture<String> CONNECTION_REHEARSAL =
      new java.util.concurrent.CompletableFuture<>();
  /** The most the connection rehearsal may take, all of it; less where the connect deadline is shorter. */
  private static final long REHEARSAL_BUDGET_MS = 10_000;
  /** Set by the first open of the JVM, which rehearses a connection. */
  private static final java.util.concurrent.atomic.AtomicBoolean CONNECTION_REHEARSED =
      new java.util.concurrent.atomic.AtomicBoolean();

  private Transports() {}

  /**
   * Every provider registered as {@code META-INF/services/io.sluice.transport.TransportProvider}
   * (tcp and shm of this jar, verbs of sluice-transport-verbs), in order of preference for {@code
   * auto} ({@link TransportProvider#autoPreference()}); those auto never chooses on its own come
   * last.
   */
  public static List<TransportProvider> providers() {
    List<TransportProvider> list = new ArrayList<>();
    for (TransportProvider p : ServiceLoader.load(TransportProvider.class, Transports.class.getClassLoader())) {
      list.add(p);
    }
    list.sort(Comparator.comparingInt(p -> p.autoPreference().orElse(Integer.MAX_VALUE)));
    return list;
  }

  /** Every key the transport reads: {@link TransportKeys#all()} and each provider's own. */
  public static List<ConfigKey<?>> keys() {
    List<ConfigKey<?>> all = new ArrayList<>(TransportKeys.all());
    for (TransportProvider p : providers()) {
      all.addAll(p.keys());
    }
    return all;
  }

  /**
   * Reads every transport key of {@code source}, the providers' own included, with its parser and
   * checks: a value any provider would refuse is refused here, on every host, whichever provider
   * will run. @throws IllegalArgumentException naming the first bad key and its value
   */
  public static void validate(ConfigSource source) {
    for (ConfigKey<?> k : keys()) {
      k.from(source);
    }
  }

  /**
   * The verbs provider's key for where peers' READs are registered, declared with its parser by
   * that provider ({@code VerbsKeys.READ_DOMAINS}); named here so that code without the verbs
   * module on its class path can read or set it.
   */
  public static final String VERBS_READ_DOMAINS = TransportKeys.PREFIX + "verbs.readDomains";

  /**
   * Refuses any {@code sluice.transport.verbs.readDomains} but {@code per-peer} for an application
   * whose regions are meant for one reader each (its grants, or a key only that reader is told):
   * with one protection domain shared by every peer ({@code shared}), any peer could READ a region
   * another looked up by guessing its rkey. {@code whose} names what would be exposed.
   *
   * @throws IllegalArgumentException if set to anything else
   */
  public static void requireReadsKeptPerPeer(ConfigSource source, String whose) {
    java.util.Optional<String> value = source.get(VERBS_READ_DOMAINS).map(String::trim);
    if (value.isPresent() && !"per-peer".equalsIgnoreCase(value.get())) {
      throw new IllegalArgumentException(VERBS_READ_DOMAINS + "=" + value.get() + ": " + whose + ", which only"
          + " per-peer protection domains keep from the other peers; leave it per-peer");
    }
  }

  /**
   * Warnings for the keys among {@code present} that start with the transport's prefix but that no
   * declaration knows, each naming the closest known key; empty when all are known.
   */
  public static List<String> unknownKeys(Iterable<String> present) {
    List<String> known = keys().stream().map(ConfigKey::key).toList();
    return ConfigKey.unknown(present, TransportKeys.PREFIX, known);
  }

  /** The provider with that name. @throws IllegalArgumentException for an unknown name */
  public static TransportProvider provider(String name) {
    String wanted = name.toLowerCase(Locale.ROOT).trim();
    for (TransportProvider p : providers()) {
      if (p.name().equals(wanted)) {
        return p;
      }
    }
    if (wanted.equals("verbs")) {
      throw new IllegalArgumentException(
          "transport provider 'verbs' is not on the class path: add the sluice-transport-verbs jar");
    }
    throw new IllegalArgumentException(
        "unknown transport provider '" + name + "'; expected auto, tcp, shm or verbs");
  }

  /**
   * Why verbs may not carry this configuration's READs, if it may not: verbs cannot encrypt on
   * the wire, so with {@link TransportKeys#ENCRYPTION} on it carries only data that is already
   * ciphertext ({@link TransportKeys#DATA_ENCRYPTED_AT_REST}).
   */
  static java.util.Optional<String> verbsRefusal(TransportConfig config) {
    if (config.value(TransportKeys.ENCRYPTION) && !config.value(TransportKeys.DATA_ENCRYPTED_AT_REST)) {
      return java.util.Optional.of(TransportKeys.ENCRYPTION.key() + "=true and the data is not encrypted at rest ("
          + TransportKeys.DATA_ENCRYPTED_AT_REST.key() + "=false); verbs cannot encrypt on the wire, so peers are"
          + " read over encrypted tcp (same-host peers over shm)");
    }
    return java.util.Optional.empty();
  }

  /**
   * Opens a transport as {@link TransportKeys#PROVIDER} says. The cryptography it needs is loaded
   * on a short-lived thread of its own ({@link Handshake#loadAlgorithms}, the AES-GCM engine's
   * choice, and {@link Handshake#loadEncryption} when that is the JDK's) while the providers are probed and the
   * transport set up, so a cold JVM does not pay for both in turn. The first transport a JVM opens
   * then rehearses a whole connection before it is returned ({@link #rehearseConnection}), so the
   * first real connection, usually a task's, finds the carrier's and the handshake's code loaded
   * and run once.
   */
  public static Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    Opened o = openLeavingRehearsal(config, handler);
    o.rehearsal().run();
    return o.transport();
  }

  /**
   * A transport just opened, and the JVM's connection rehearsal if this open is the one to run it
   * (else a {@code Runnable} that does nothing).
   */
  public record Opened(Transport transport, Runnable rehearsal) {}

  /**
   * As {@link #open}, but where this is the JVM's first open, its connection rehearsal ({@link
   * #rehearseConnection}) is handed to the caller to run once its own set-up is done (on any
   * thread, once; it never throws), rather than run before the transport is returned: a Spark
   * executor publishes its transport's address first, so its first map task need not wait for the
   * rehearsal. A JVM that exits while it runs may leave the throwaway's arena in the shm folder,
   * which the next open there reclaims.
   */
  public static Opened openLeavingRehearsal(TransportConfig config, MessageHandler handler) throws TransportException {
    try {
      Curves.chosen(); // every identity and handshake needs them
    } catch (IllegalStateException e) {
      throw new TransportUnavailableException(e.getMessage(), e);
    }
    Thread[] load = new Thread[1];
    Transport t = openChosen(config, handler, load);
    if (!REHEARSAL.equals("true")) {
      CONNECTION_REHEARSAL.complete("off");
    } else if (CONNECTION_REHEARSED.compareAndSet(false, true)) {
      String provider = t.provider();
      Thread loading = load[0];
      java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
      return new Opened(t, () -> {
        if (ran.compareAndSet(false, true)) {
          rehearseConnection(config, provider, loading);
        }
      });
    }
    return new Opened(t, () -> { });
  }

  private static Transport openChosen(TransportConfig config, MessageHandler handler, Thread[] loading)
      throws TransportException {
    TransportConfig asked = config;
    Thread load = new Thread(() -> {
      Handshake.loadAlgorithms();
      boolean encrypt;
      AesGcmEngine engine;
      try {
        encrypt = asked.value(TransportKeys.ENCRYPTION);
        engine = EngineChoice.choose(asked.value(TransportKeys.ENCRYPTION_ENGINE)).engine();
      } catch (IllegalArgumentException | IllegalStateException e) {
        return; // a bad value or an engine that cannot be had: the open itself refuses it, naming why
      }
      if (engine == AesGcmEngine.JDK) {
        // Every connection uses it: aead records, mac mode's READ_RESPONSE GMAC. OpenSSL's engine
        // was loaded by its choice.
        Handshake.loadEncryption();
      }
      if (REHEARSE_IN_MEMORY) {
        Rehearsal.run(engine, encrypt);
      } else if (!"false".equals(REHEARSAL)) {
        Rehearsal.loadConnectionClasses(); // on this thread while the transport sets up
      }
    }, "sluice-load-crypto");
    load.setDaemon(true);
    load.start();
    loading[0] = load;
    String wanted = config.value(TransportKeys.PROVIDER);
    java.util.Optional<String> noVerbs = verbsRefusal(config);
    if (wanted.equals("verbs") && noVerbs.isPresent()) {
      LOG.warn("Sluice transport: provider verbs was configured, but {}", noVerbs.get());
      wanted = "auto";
      config = config.with(java.util.Map.of(TransportKeys.PROVIDER.key(), "auto"));
    }
    if (!wanted.equals("auto")) {
      TransportProvider p = provider(wanted);
      p.ensureAvailability();
      Transport t = p.open(config, handler);
      LOG.info("Sluice transport: provider {} (configured by {})", t.provider(), TransportKeys.PROVIDER.key());
      return t;
    }
    StringBuilder why = new StringBuilder();
    for (TransportProvider p : providers()) {
      if (p.autoPreference().isEmpty()) {
        continue; // a data path of another provider under auto (shm of tcp), not a choice of its own
      }
      if (p.name().equals("verbs") && noVerbs.isPresent()) {
        why.append(why.length() > 0 ? "; " : "").append("verbs skipped: ").append(noVerbs.get());
        continue;
      }
      if (p.isAvailable()) {
        Transport t;
        try {
          t = p.open(config, handler);
        } catch (TransportUnavailableException e) {
          // Available in principle but not usable with this configuration: try the next one.
          why.append(why.length() > 0 ? "; " : "").append(p.name()).append(" failed to open: ").append(e.getMessage());
          continue;
        }
        String shm = config.value(TransportKeys.SHM_ENABLED)
            ? "same-host peers read through shm" : "shm disabled by " + TransportKeys.SHM_ENABLED.key();
        LOG.info("Sluice transport: provider {} chosen by auto ({}{})", t.provider(),
            why.length() == 0 ? "" : why + "; ", shm);
        return t;
      }
      if (why.length() > 0) {
        why.append("; ");
      }
      why.append(p.name()).append(" unavailable: ")
          .append(p.unavailabilityCause().map(Throwable::getMessage).orElse("unknown"));
    }
    throw new TransportUnavailableException("no transport provider is available: " + why);
  }

  /**
   * Rehearses a whole connection, once per JVM, after its first transport opened and before that
   * open returns: once the open's cryptography thread is done, a throwaway transport of the same
   * provider and settings (tcp for verbs, whose device it leaves alone), with a secret of its own,
   * on a free port of loopback, connects to itself, READs 4 KiB through that connection and closes,
   * so nothing of it outlives the open (no thread, no arena in the shm folder). A cold JVM's first
   * connection otherwise runs the carrier's connect, accept, session and READ paths for the first
   * time (class loading, lambda linkage, interpretation, on both ends) inside a task: measured with
   * {@code ColdOpenCost}, that is most of its cost. The throwaway has its own metrics and
   * identity; the opened transport never sees it. All of it within the connect deadline, and at
   * most {@link #REHEARSAL_BUDGET_MS}; whatever fails is logged at debug and left for real
   * connections to report.
   */
  private static void rehearseConnection(TransportConfig config, String provider, Thread loading) {
    // One budget for all of it; the rehearsal is worth nothing past it.
    long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
        Math.min(REHEARSAL_BUDGET_MS, config.value(TransportKeys.CONNECT_TIMEOUT_MS)));
    try {
      loading.join(Math.max(1, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
      byte[] secret = new byte[32];
      new java.security.SecureRandom().nextBytes(secret);
      // It connects only to itself: loopback, whatever address the settings bind.
      TransportConfig own = config.with(java.util.Map.of(
          TransportKeys.SECRET.key(), java.util.HexFormat.of().formatHex(secret),
          TransportKeys.PORT.key(), "0",
          TransportKeys.BIND_HOST.key(), "127.0.0.1",
          TransportKeys.ADVERTISE_HOST.key(), "127.0.0.1"));
      TransportProvider p = provider(provider.equals("verbs") ? "tcp" : provider);
      try (Transport rehearsal = p.open(own, MessageHandler.REJECT_ALL);
          RegisteredRegion source = rehearsal.allocate(4096);
          RegisteredRegion destination = rehearsal.allocate(4096)) {
        Connection c = rehearsal.connect(rehearsal.localAddress())
            .get(left(end), java.util.concurrent.TimeUnit.NANOSECONDS);
        try {
          c.read(source.descriptor(), 0, destination, 0, 4096)
              .get(left(end), java.util.concurrent.TimeUnit.NANOSECONDS);
          CONNECTION_REHEARSAL.complete("rehearsed over " + c.dataPath());
        } finally {
          c.close();
        }
      }
    } catch (InterruptedException e) {
      CONNECTION_REHEARSAL.complete("failed: interrupted");
      Thread.currentThread().interrupt();
    } catch (Throwable e) { // whatever it is, the opened transport does not care
      CONNECTION_REHEARSAL.complete("failed: " + e);
      LOG.debug("Sluice transport: the connection rehearsed at open failed: {}", e.toString());
    } finally {
      CONNECTION_REHEARSAL.complete("failed: ended without an outcome");
    }
  }

  private static long left(long endNanos) {
    return Math.max(1, endNanos - System.nanoTime());
  }
}
