package io.sluice.flight.server;

import io.sluice.flight.CallToken;
import io.sluice.flight.FlightOption;
import io.sluice.flight.ServerAction;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Starts and stops the parts of a {@link io.sluice.flight.SluiceFlightServer}. */
public final class FlightServers {
  private static final Logger LOG = LoggerFactory.getLogger(FlightServers.class);
  private static final long SHUTDOWN_GRACE_SECONDS = 5;

  private FlightServers() {}

  /** A started server: its Flight server, shared state and what to close. */
  public static final class Running implements AutoCloseable {
    private final FlightServer flight;
    private final ServerState state;
    private final Location location;

    private Running(FlightServer flight, ServerState state, Location location) {
      this.flight = flight;
      this.state = state;
      this.location = location;
    }

    public Location location() {
      return location;
    }

    public TableRegistry tables() {
      return state.tables();
    }

    /** Unpublishes a table (and gives back what it held of the put budget). */
    public boolean remove(String name) {
      return state.remove(name);
    }

    /** Threads serving plain streams and data-plane gets now. */
    public int streamThreads() {
      return state.plainStreams().threadCount() + state.dataPlaneGets().threadCount();
    }

    /** The data plane's transport; empty when it is off. */
    public Optional<Transport> transport() {
      return state.transport();
    }

    /** Publishes a table, registering its bodies when the data plane is on. */
    public void publish(String name, io.sluice.flight.table.FlightTable table) throws TransportException {
      state.publish(name, table);
    }

    public int activeStreams() {
      return state.activeStreams().get();
    }

    public int activeGrants() {
      return state.activeGrants().get();
    }

    /** The server's counters. */
    public FlightMetrics metrics() {
      return state.metrics();
    }

    @Override
    public void close() {
      flight.shutdown();
      try {
        if (!flight.awaitTermination(SHUTDOWN_GRACE_SECONDS, TimeUnit.SECONDS)) {
          LOG.warn("Flight calls still running after {} s; closing anyway", SHUTDOWN_GRACE_SECONDS);
        }
        flight.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      state.plainStreams().shutdownNow();
      state.dataPlaneGets().shutdownNow();
      // A stream's client may have heard its end while its thread still closes what it holds of
      // the allocator and the tables: the tables close, and the caller's allocator may be closed,
      // only once those threads are gone.
      long grace = TimeUnit.SECONDS.toNanos(SHUTDOWN_GRACE_SECONDS);
      boolean plainEnded = state.plainStreams().awaitTermination(grace);
      boolean getsEnded = state.dataPlaneGets().awaitTermination(grace);
      if (!plainEnded || !getsEnded) {
        LOG.warn("Flight streams still running {} s after they were interrupted; closing anyway",
            SHUTDOWN_GRACE_SECONDS);
      }
      state.tables().close();
      state.transport().ifPresent(Transport::close);
    }
  }

  /** A TLS server's certificate chain and its private key, PEM files (the key in PKCS#8). */
  public record Tls(Path certChain, Path privateKey) {}

  /**
   * Starts a server. Where {@code config} holds a secret, every call must present its {@link
   * CallToken} (calls without it go to {@code authenticator}, else are refused); otherwise {@code
   * authenticator} alone, if any, authenticates calls.
   *
   * @param authenticator the application's own call authentication, or null
   * @param tls the certificate for a {@code grpc+tls} location, or null
   */
  public static Running start(BufferAllocator allocator, Location location, TransportConfig config,
      CallHeaderAuthenticator authenticator, Tls tls) throws IOException {
    return start(allocator, location, config, authenticator, tls, Map.of());
  }

  /**
   * Starts a server that also answers the application's own actions ({@code actions}, by type),
   * after the same call authentication as every other call.
   */
  public static Running start(BufferAllocator allocator, Location location, TransportConfig config,
      CallHeaderAuthenticator authenticator, Tls tls, Map<String, ServerAction> actions) throws IOException {
    // Every key the server or its transport (any provider's) would read, checked before anything
    // starts, on every host: an invalid value fails here naming the key.
    for (io.sluice.transport.config.ConfigKey<?> k : FlightOption.all()) {
      k.from(config);
    }
    io.sluice.transport.Transports.validate(config);
    io.sluice.transport.Transports.requireReadsKeptPerPeer(config, "the data plane grants each stream's batches to"
        + " its reader alone");
    long ackTimeout = TimeUnit.MILLISECONDS.toNanos(config.value(FlightOption.ACK_TIMEOUT_MS));
    int window = (int) Math.min(FlightOption.MAX_STREAM_WINDOW, config.value(FlightOption.STREAM_WINDOW));
    int chunk = (int) Math.min(Integer.MAX_VALUE, config.value(FlightOption.READ_CHUNK_BYTES));
    Grants grants = new Grants(ackTimeout, config.value(FlightOption.GRANTS_PER_CLIENT),
        config.value(FlightOption.GRANTS_PER_HOST));
    ServedGets gets = new ServedGets();
    FlightMetrics metrics = new FlightMetrics();
    Optional<Transport> transport = openTransport(dataPlaneConfig(config, location, tls), grants, gets, metrics);
    // Fixed bounds with a share per client and per host: a reader that stops reading holds its
    // stream's thread until the deadline, so many of them must not grow the server's threads
    // without end, nor one client, or one host's clients, take the threads every other needs.
    StreamPool plainStreams = new StreamPool("sluice-flight-stream", config, FlightOption.STREAM_THREADS,
        FlightOption.STREAM_THREADS_PER_CLIENT, FlightOption.STREAM_THREADS_PER_HOST);
    StreamPool dataPlaneGets = new StreamPool("sluice-flight-get", config, FlightOption.DATA_PLANE_GETS,
        FlightOption.DATA_PLANE_GETS_PER_CLIENT, FlightOption.DATA_PLANE_GETS_PER_HOST);
    ServerState state = new ServerState(allocator, new TableRegistry(), transport, grants, gets, window,
        config.value(FlightOption.WINDOW_BYTES),
        ackTimeout, chunk, TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.CONNECT_TIMEOUT_MS)),
        config.value(FlightOption.PUTS), config.value(FlightOption.MAX_PUT_BYTES),
        new PutBudget(config.value(FlightOption.MAX_PUT_TOTAL_BYTES), config.value(FlightOption.MAX_PUT_TABLES)),
        plainStreams, dataPlaneGets, new AtomicInteger(),
        new AtomicInteger(), CallToken.of(config), metrics);
    FlightServer flight = null;
    try {
      // The producer needs the bound port for its endpoints: bind first, then point it there.
      LocationHolder where = new LocationHolder(location);
      FlightServer.Builder b = FlightServer.builder(allocator, location, new TableProducer(state, where.list(), Map.copyOf(actions)));
      b.transportHint("grpc.builderConsumer",
          (java.util.function.Consumer<io.grpc.netty.NettyServerBuilder>) g -> g.intercept(new PeerAddress()));
      Optional<CallToken.Key> token = state.offerKey();
      Set<String> audiences = ConcurrentHashMap.newKeySet();
      for (String a : config.value(FlightOption.TOKEN_AUDIENCES).split(",")) {
        if (!a.isBlank()) {
          audiences.add(CallToken.audience(a));
        }
      }
      if (token.isPresent()) {
        b.headerAuthenticator(new CountingAuthenticator(new TokenAuthenticator(token.get(), () -> audiences,
            Clock.systemUTC(), java.time.Duration.ofMillis(config.value(FlightOption.TOKEN_MAX_VALIDITY_MS)),
            authenticator), metrics));
      } else if (authenticator != null) {
        b.headerAuthenticator(new CountingAuthenticator(authenticator, metrics));
      }
      if (tls != null) {
        b.useTls(tls.certChain().toFile(), tls.privateKey().toFile());
      }
      flight = b.build().start();
      Location bound = where.bind(flight.getPort());
      audiences.add(CallToken.audienceOf(bound));
      LOG.info("Flight server at {}; calls authenticated by: {}; data plane: {}", bound.getUri(),
          token.isPresent() ? "the secret's tokens for " + audiences : authenticator != null ? "the application" : "nothing",
          transport.map(t -> t.provider() + " at " + t.localAddress()).orElse("off"));
      return new Running(flight, state, bound);
    } catch (IOException | RuntimeException e) {
      if (flight != null) {
        try {
          flight.close();
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
        }
      }
      plainStreams.shutdownNow();
      dataPlaneGets.shutdownNow();
      transport.ifPresent(Transport::close);
      throw e;
    }
  }

  /**
   * The data plane's configuration: on a TLS location, the transport encrypts whatever the
   * configuration says, so batch bodies never travel in clear beside a TLS control path.
   */
  static TransportConfig dataPlaneConfig(TransportConfig config, Location location, Tls tls) {
    boolean tlsLocation = tls != null || location.getUri().getScheme().endsWith("+tls");
    if (!tlsLocation || config.value(TransportKeys.ENCRYPTION)) {
      return config;
    }
    if (!config.value(TransportKeys.SECRET).isEmpty()) {
      LOG.info("Flight server on TLS: its data plane's transport encrypts too ({}=true, whatever the configuration"
          + " says)", TransportKeys.ENCRYPTION.key());
    }
    return config.with(Map.of(TransportKeys.ENCRYPTION.key(), "true"));
  }

  private static Optional<Transport> openTransport(TransportConfig config, Grants grants, ServedGets gets,
      FlightMetrics metrics) {
    if (config.value(TransportKeys.SECRET).isEmpty()) {
      LOG.info("Flight data plane off: {} is not set; every stream is plain Flight", TransportKeys.SECRET.key());
      return Optional.empty();
    }
    java.util.concurrent.atomic.AtomicReference<Transport> opened = new java.util.concurrent.atomic.AtomicReference<>();
    MessageHandler handler = new DataPlaneRequests(grants, gets, metrics, opened);
    try {
      Transport t = Transports.open(config, handler);
      opened.set(t);
      return Optional.of(t);
    } catch (TransportException | RuntimeException e) {
      LOG.warn("Flight data plane off: the transport did not start ({}); every stream is plain Flight", e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * The requests of the data plane's transport peers: grants, and the pulls of gets being served.
   * A grant counts against its node and the host its connection comes from, and is the identity
   * key's that the node's connection proved to {@code transport} (set once it has opened).
   */
  private record DataPlaneRequests(Grants grants, ServedGets gets, FlightMetrics metrics,
      java.util.concurrent.atomic.AtomicReference<Transport> transport) implements MessageHandler {
    @Override
    public CompletableFuture<ByteBuffer> handle(long peer, ByteBuffer request) {
      return serve(peer, HostKey.UNKNOWN, request); // a transport that does not say where peers are
    }

    @Override
    public CompletableFuture<ByteBuffer> handle(long peer, InetAddress address, ByteBuffer request) {
      return serve(peer, HostKey.of(address), request);
    }

    private CompletableFuture<ByteBuffer> serve(long peer, String host, ByteBuffer request) {
      if (DataPlaneProtocol.isGrantRequest(request)) {
        Optional<byte[]> key = Optional.ofNullable(transport.get()).flatMap(t -> t.peerIdentityKey(peer));
        if (key.isEmpty()) {
          // The asking connection closed meanwhile, or the transport is still opening.
          return CompletableFuture.failedFuture(new IllegalStateException("no connection of this peer is open"));
        }
        try {
          byte[] grant = grants.issue(peer, key.get(), host);
          metrics.grantIssued();
          return CompletableFuture.completedFuture(ByteBuffer.wrap(grant));
        } catch (ResourceExhaustedException e) {
          return CompletableFuture.failedFuture(e); // the peer's request fails as EXHAUSTED: it asks again
        }
      }
      if (DataPlaneProtocol.isPull(request)) {
        try {
          return CompletableFuture.completedFuture(gets.pull(peer, request));
        } catch (RuntimeException e) {
          return CompletableFuture.failedFuture(e);
        }
      }
      return CompletableFuture.failedFuture(new IllegalArgumentException("not a data-plane request"));
    }
  }

  /** The endpoint location, fixed once the server has bound its port. */
  private static final class LocationHolder {
    private final Location requested;
    private final java.util.concurrent.CopyOnWriteArrayList<Location> list = new java.util.concurrent.CopyOnWriteArrayList<>();

    LocationHolder(Location requested) {
      this.requested = requested;
    }

    List<Location> list() {
      return list;
    }

    Location bind(int port) {
      java.net.URI u = requested.getUri();
      String host = u.getHost();
      if (host == null || host.equals("0.0.0.0") || host.equals("::")) {
        host = localHost();
      }
      Location bound;
      try {
        bound = new Location(u.getScheme() + "://" + hostForUri(host) + ":" + port);
      } catch (java.net.URISyntaxException e) {
        throw new IllegalArgumentException("bad server location " + u + ": " + e.getMessage(), e);
      }
      list.add(bound);
      return bound;
    }

    private static String localHost() {
      try {
        return java.net.InetAddress.getLocalHost().getHostAddress();
      } catch (IOException e) {
        return "127.0.0.1";
      }
    }

    private static String hostForUri(String host) {
      return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    }
  }
}
