package io.sluice.transport.metrics;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.TransportTimeoutException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of one transport: READs and their bytes by data path, READ and request latency,
 * connections opened, refused and closed by reason, handshake failures by reason, registered
 * memory, bytes in flight and admission drops. Each is a {@link LongAdder} or a {@link
 * LatencyHistogram}: no locks, so they are kept where things happen (the READ path included),
 * and the integrations read {@link #snapshot()} into their own metrics systems.
 *
 * <p>Every snapshot lists the same names in the same order, whatever happened, so an adapter can
 * register them all up front. Thread safe.
 */
public final class TransportMetrics {
  /** The data paths READs are counted by, as {@link Connection#dataPath()} names them. */
  public static final List<String> PATHS = List.of("tcp", "shm", "verbs");
  /** The AES-GCM engines encrypted connections may use, as {@code AesGcmEngine.id()} names them. */
  public static final List<String> ENGINES = List.of("openssl", "jdk");

  /** Why an accepted connection was refused before its handshake began. */
  public enum Refusal {
    /** {@code sluice.transport.maxConnections} connections were open. */
    MAX_CONNECTIONS,
    /** Too many unauthenticated connections from the peer's network. */
    PER_ADDRESS,
    /** A selector thread of this transport had died. */
    TRANSPORT_FAILED;

    String metricName() {
      return camel(name());
    }
  }

  /** How a connection ended, or why a handshake failed. */
  public enum Reason {
    /** The peer closed it. */
    PEER_CLOSED,
    /** This side closed it (the transport or the connection was closed). */
    LOCAL,
    /** Authentication failed: a wrong secret, key or signature. */
    AUTHENTICATION,
    /** The peer broke the protocol. */
    PROTOCOL,
    /** A deadline passed (handshake, connect or I/O). */
    TIMEOUT,
    /** Dropped unauthenticated to make room for other connections ({@link #admissionDropped}). */
    DROPPED,
    /** Nothing listened at the address (connects only). */
    REFUSED,
    /** Anything else: a socket error. */
    ERROR;

    String metricName() {
      return camel(name());
    }

    /**
     * The reason {@code cause} stands for; {@code closing} when this side was closing. Never {@link
     * #DROPPED}, which only the admission knows.
     */
    public static Reason of(Throwable cause, boolean closing) {
      Throwable c = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
      if (c instanceof AuthenticationFailedException) {
        return AUTHENTICATION;
      }
      if (c instanceof ProtocolException) {
        return PROTOCOL;
      }
      if (c instanceof TransportTimeoutException) {
        return TIMEOUT;
      }
      if (c instanceof ConnectException) {
        return REFUSED;
      }
      if (closing) {
        return LOCAL;
      }
      if (c instanceof PeerClosedException || c == null) {
        return PEER_CLOSED;
      }
      return ERROR;
    }
  }

  private final LongAdder[] readCount = adders(PATHS.size());
  private final LongAdder[] readBytes = adders(PATHS.size());
  private final LongAdder readFailures = new LongAdder();
  private final LongAdder readBytesInFlight = new LongAdder();
  private final LongAdder viewCount = new LongAdder();
  private final LongAdder viewBytes = new LongAdder();
  private final LatencyHistogram readLatency = new LatencyHistogram();
  private final LongAdder requestCount = new LongAdder();
  private final LongAdder requestFailures = new LongAdder();
  private final LatencyHistogram requestLatency = new LatencyHistogram();
  private final LongAdder servedReads = new LongAdder();
  private final LongAdder servedReadBytes = new LongAdder();
  private final LongAdder servedRequests = new LongAdder();
  private final LongAdder opened = new LongAdder();
  private final LongAdder accepted = new LongAdder();
  private final LongAdder[] refused = adders(Refusal.values().length);
  private final LongAdder[] closed = adders(Reason.values().length);
  private final LongAdder[] connectFailures = adders(Reason.values().length);
  private final LongAdder[] handshakeFailures = adders(Reason.values().length);
  private final LongAdder admissionDrops = new LongAdder();
  private final LongAdder registeredBytes = new LongAdder();
  private final LongAdder registeredRegions = new LongAdder();
  private volatile String engine = "jdk";

  private static LongAdder[] adders(int n) {
    LongAdder[] a = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  private static String camel(String enumName) {
    StringBuilder b = new StringBuilder();
    boolean up = false;
    for (char ch : enumName.toLowerCase(Locale.ROOT).toCharArray()) {
      if (ch == '_') {
        up = true;
      } else {
        b.append(up ? Character.toUpperCase(ch) : ch);
        up = false;
      }
    }
    return b.toString();
  }

  private static int pathIndex(String path) {
    int i = PATHS.indexOf(path);
    return i >= 0 ? i : 0; // a path this list does not know yet counts as tcp, the carrier's
  }

  /**
   * Counts the READs of {@code requests}, issued on {@code connection}, as their futures
   * ({@code results}, in the same order) complete: each by the data path {@link
   * Connection#dataPath(io.sluice.transport.RemoteDescriptor)} says it took, its latency from
   * now, and its bytes in flight until then. Returns {@code results}, the same futures.
   */
  public List<CompletableFuture<Void>> meterReads(Connection connection, List<ReadRequest> requests,
      List<CompletableFuture<Void>> results) {
    long start = System.nanoTime();
    for (int i = 0; i < results.size(); i++) {
      ReadRequest r = requests.get(i);
      int length = r.length();
      readBytesInFlight.add(length);
      results.get(i).whenComplete((x, error) -> {
        readBytesInFlight.add(-length);
        if (error != null) {
          readFailures.increment();
          return;
        }
        readLatency.record(System.nanoTime() - start);
        int p = pathIndex(connection.dataPath(r.remote()));
        readCount[p].increment();
        readBytes[p].add(length);
      });
    }
    return results;
  }

  /** Counts a request sent and, as {@code reply} completes, its latency or failure; returns {@code reply}. */
  public CompletableFuture<ByteBuffer> meterRequest(CompletableFuture<ByteBuffer> reply) {
    long start = System.nanoTime();
    reply.whenComplete((x, error) -> {
      if (error != null) {
        requestFailures.increment();
      } else {
        requestCount.increment();
        requestLatency.record(System.nanoTime() - start);
      }
    });
    return reply;
  }

  /** This side served a READ frame of {@code bytes} to a peer. */
  public void readServed(long bytes) {
    servedReads.increment();
    servedReadBytes.add(bytes);
  }

  /** This side's message handler was handed a peer's request. */
  public void requestServed() {
    servedRequests.increment();
  }

  /** A connection this side made was authenticated. */
  public void connectionOpened() {
    opened.increment();
  }

  /** Connecting to a peer failed for {@code reason}; a handshake failure if the socket had connected. */
  public void connectFailed(Reason reason, boolean handshakeStarted) {
    connectFailures[reason.ordinal()].increment();
    if (handshakeStarted && reason != Reason.LOCAL && reason != Reason.REFUSED) {
      handshakeFailures[reason.ordinal()].increment();
    }
  }

  /** A peer's connection was accepted and handed to a selector thread. */
  public void connectionAccepted() {
    accepted.increment();
  }

  /** A peer's connection was closed at once, before its handshake, for {@code why}. */
  public void connectionRefused(Refusal why) {
    refused[why.ordinal()].increment();
  }

  /** An unauthenticated connection was dropped to make room for a new one. */
  public void admissionDropped() {
    admissionDrops.increment();
  }

  /**
   * An accepted connection ended for {@code reason}; a handshake failure if it had not
   * authenticated and this side was not the one closing.
   */
  public void sessionEnded(Reason reason, boolean authenticated) {
    closed[reason.ordinal()].increment();
    if (!authenticated && reason != Reason.LOCAL && reason != Reason.DROPPED) {
      handshakeFailures[reason.ordinal()].increment();
    }
  }

  /** A region of {@code bytes} was registered. */
  public void regionRegistered(long bytes) {
    registeredRegions.increment();
    registeredBytes.add(bytes);
  }

  /** A read-only view of {@code bytes} of a peer's region was taken ({@code Connection.view}): no READ, no copy. */
  public void viewTaken(long bytes) {
    viewCount.increment();
    viewBytes.add(bytes);
  }

  /**
   * Encrypted connections seal and open with the engine named {@code id}, one of {@link #ENGINES}
   * (set once, when the carrier opens).
   */
  public void encryptionEngine(String id) {
    if (!ENGINES.contains(id)) {
      throw new IllegalArgumentException("AES-GCM engine '" + id + "' is none of " + ENGINES);
    }
    this.engine = id;
  }

  /** The AES-GCM engine in use, as named in {@link #ENGINES}; the JDK's until a carrier has chosen. */
  public String encryptionEngine() {
    return engine;
  }

  /** A region of {@code bytes} was freed. */
  public void regionFreed(long bytes) {
    registeredRegions.decrement();
    registeredBytes.add(-bytes);
  }

  /** Every metric now, the same names in the same order each time; see the transport README for each. */
  public List<Metric> snapshot() {
    List<Metric> m = new ArrayList<>(128);
    for (int i = 0; i < PATHS.size(); i++) {
      m.add(Metric.counter("reads." + PATHS.get(i) + ".count", Metric.Unit.COUNT, readCount[i].sum()));
      m.add(Metric.counter("reads." + PATHS.get(i) + ".bytes", Metric.Unit.BYTES, readBytes[i].sum()));
    }
    m.add(Metric.counter("reads.failed", Metric.Unit.COUNT, readFailures.sum()));
    m.add(Metric.gauge("reads.inFlightBytes", Metric.Unit.BYTES, readBytesInFlight.sum()));
    histogram(m, "reads.latency", readLatency.snapshot());
    m.add(Metric.counter("views.count", Metric.Unit.COUNT, viewCount.sum()));
    m.add(Metric.counter("views.bytes", Metric.Unit.BYTES, viewBytes.sum()));
    m.add(Metric.counter("requests.count", Metric.Unit.COUNT, requestCount.sum()));
    m.add(Metric.counter("requests.failed", Metric.Unit.COUNT, requestFailures.sum()));
    histogram(m, "requests.latency", requestLatency.snapshot());
    m.add(Metric.counter("served.reads.count", Metric.Unit.COUNT, servedReads.sum()));
    m.add(Metric.counter("served.reads.bytes", Metric.Unit.BYTES, servedReadBytes.sum()));
    m.add(Metric.counter("served.requests.count", Metric.Unit.COUNT, servedRequests.sum()));
    m.add(Metric.counter("connections.opened", Metric.Unit.COUNT, opened.sum()));
    m.add(Metric.counter("connections.accepted", Metric.Unit.COUNT, accepted.sum()));
    for (Refusal r : Refusal.values()) {
      m.add(Metric.counter("connections.refused." + r.metricName(), Metric.Unit.COUNT, refused[r.ordinal()].sum()));
    }
    for (Reason r : Reason.values()) {
      if (r != Reason.REFUSED) {
        m.add(Metric.counter("connections.closed." + r.metricName(), Metric.Unit.COUNT, closed[r.ordinal()].sum()));
      }
    }
    for (Reason r : Reason.values()) {
      if (r != Reason.DROPPED) {
        m.add(Metric.counter("connections.connectFailed." + r.metricName(), Metric.Unit.COUNT,
            connectFailures[r.ordinal()].sum()));
      }
    }
    for (Reason r : List.of(Reason.AUTHENTICATION, Reason.PROTOCOL, Reason.TIMEOUT, Reason.PEER_CLOSED, Reason.ERROR)) {
      m.add(Metric.counter("handshake.failed." + r.metricName(), Metric.Unit.COUNT,
          handshakeFailures[r.ordinal()].sum()));
    }
    m.add(Metric.counter("admission.dropped", Metric.Unit.COUNT, admissionDrops.sum()));
    m.add(Metric.gauge("memory.registeredBytes", Metric.Unit.BYTES, registeredBytes.sum()));
    m.add(Metric.gauge("memory.registeredRegions", Metric.Unit.COUNT, registeredRegions.sum()));
    for (String e : ENGINES) {
      m.add(Metric.gauge("encryption.engine." + e, Metric.Unit.COUNT, e.equals(engine) ? 1 : 0));
    }
    return m;
  }

  /**
   * A histogram as counters: its count, sum, p50/p99 estimates and one cumulative count per
   * bucket bound ({@code name.le.<bound>us}, Prometheus' {@code le}).
   */
  public static void histogram(List<Metric> into, String name, LatencyHistogram.Snapshot s) {
    into.add(Metric.counter(name + ".count", Metric.Unit.COUNT, s.count()));
    into.add(Metric.counter(name + ".sumMicros", Metric.Unit.MICROSECONDS, s.sumMicros()));
    into.add(Metric.gauge(name + ".p50Micros", Metric.Unit.MICROSECONDS, s.quantileMicros(0.5)));
    into.add(Metric.gauge(name + ".p99Micros", Metric.Unit.MICROSECONDS, s.quantileMicros(0.99)));
    for (int i = 0; i < LatencyHistogram.BOUNDS_MICROS.length; i++) {
      into.add(Metric.counter(name + ".le." + LatencyHistogram.BOUNDS_MICROS[i] + "us", Metric.Unit.COUNT,
          s.cumulative(i)));
    }
  }
}
