package io.sluice.flight;

import io.sluice.flight.server.FlightServers;
import io.sluice.flight.server.MetricsMBean;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.metrics.Metric;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A standard Arrow Flight server for the tables an application publishes, with a READ data plane
 * for Sluice clients. Any Flight client (Java {@code FlightClient}, pyarrow, C++) lists, gets,
 * puts and exchanges as usual; a {@link SluiceFlightClient} holding the transport's shared secret
 * instead pulls each batch's IPC metadata over the transport and READs the body from memory this server
 * registered for it alone. Where a secret is configured, every Flight call must present the bearer
 * token derived from it ({@link CallToken}); calls without it are refused with UNAUTHENTICATED.
 *
 * <pre>{@code
 * try (SluiceFlightServer server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("0.0.0.0", 8815))
 *         .config(TransportConfig.of(Map.of("sluice.transport.secret", secret)))
 *         .start()) {
 *   server.publish("features", table);      // FlightTable.builder(schema, dictionaries).add(root)...build()
 *   ...                                      // clients read ticket server.ticket("features")
 * }
 * }</pre>
 *
 * <p>Thread safe. Closing stops the Flight server (ongoing calls get a few seconds), frees every
 * staged batch and published table, and closes the transport. The allocator stays the caller's.
 */
public final class SluiceFlightServer implements AutoCloseable {
  /** The JMX domain and type the servers' metrics are registered under, with the bound port. */
  public static final String JMX_NAME = "io.sluice:type=FlightServer,port=";

  private final FlightServers.Running running;
  private final MetricsMBean mbean;

  private SluiceFlightServer(FlightServers.Running running) {
    this.running = running;
    this.mbean = MetricsMBean.register(JMX_NAME + running.location().getUri().getPort(), this::metrics);
  }

  public static Builder builder(BufferAllocator allocator, Location location) {
    return new Builder(allocator, location);
  }

  /** Where Flight clients connect (with the port actually bound). */
  public Location location() {
    return running.location();
  }

  /**
   * Publishes {@code table} under {@code name}, taking the caller's reference; replaces an older
   * one. With the data plane on, the bodies are copied once into registered memory that every
   * data-plane stream READs (and that plain Flight streams are sent from).
   *
   * @throws TransportException if the memory cannot be registered (the table is released)
   */
  public void publish(String name, FlightTable table) throws TransportException {
    running.publish(name, table);
  }

  /**
   * The table published as {@code name}, retained (the caller closes it); its batches are views of
   * the registered memory streams READ. Package-private: tests reach that memory through it.
   */
  Optional<FlightTable> published(String name) {
    return running.tables().acquire(name);
  }

  /** Unpublishes a table; streams reading it finish first. */
  public boolean remove(String name) {
    return running.remove(name);
  }

  /** The ticket that opens table {@code name} (also in its FlightInfo's endpoint). */
  public static Ticket ticket(String name) {
    return TableRegistry.ticket(name);
  }

  /** The data plane's provider ("tcp", "shm" or "verbs"), or empty when it is off. */
  public Optional<String> dataPlane() {
    return running.transport().map(t -> t.provider());
  }

  /** Where the data plane's transport listens, when it is on. */
  public Optional<NodeAddress> dataPlaneAddress() {
    return running.transport().map(t -> t.localAddress());
  }

  /** Data-plane streams whose reader may READ a table now. */
  public int activeGrants() {
    return running.activeGrants();
  }

  /** Threads serving streams now (plain streams and data-plane gets); bounded by the settings. */
  public int streamThreads() {
    return running.streamThreads();
  }

  /** Data-plane streams being served now. */
  public int activeDataPlaneStreams() {
    return running.activeStreams();
  }

  /** Regions the data plane has registered now (staged batches, landing memory of puts). */
  public int registeredRegions() {
    return running.transport().map(t -> t.liveRegionCount()).orElse(0);
  }

  /**
   * This server's metrics now: gets, puts and their bytes by path, grants, refused calls, and its
   * data plane's transport's metrics under {@code transport.} (zeros while the data plane is off).
   * The same names in the same order each time; also JMX attributes of {@link #JMX_NAME}{@code
   * <port>}. See the README for each name and unit.
   */
  public List<Metric> metrics() {
    return running.metrics().snapshot(running.transport());
  }

  @Override
  public void close() {
    mbean.close();
    running.close();
  }

  /** Configures and starts a server. Not thread safe. */
  public static final class Builder {
    private final BufferAllocator allocator;
    private final Location location;
    private TransportConfig config = TransportConfig.of(Map.of());
    private CallHeaderAuthenticator authenticator;
    private FlightServers.Tls tls;
    private final java.util.Map<String, io.sluice.flight.ServerAction> actions = new java.util.LinkedHashMap<>();

    private Builder(BufferAllocator allocator, Location location) {
      this.allocator = allocator;
      this.location = location;
    }

    /** Transport keys ({@code sluice.transport.*}) and {@link FlightOption} keys. */
    public Builder config(TransportConfig config) {
      this.config = config;
      return this;
    }

    /**
     * The application's own Flight call authentication (basic or bearer). Where a secret is
     * configured, calls presenting its {@link CallToken} pass without it, and every other call goes
     * to this authenticator; without a secret it authenticates every call.
     */
    public Builder headerAuthenticator(CallHeaderAuthenticator authenticator) {
      this.authenticator = authenticator;
      return this;
    }

    /**
     * Serves Flight over TLS (the location's scheme must be {@code grpc+tls}), as Flight's {@code
     * useTls}: the server's certificate chain and its private key, PEM files, the key in PKCS#8
     * ({@code -----BEGIN PRIVATE KEY-----}). Clients trust the chain's root ({@link
     * FlightOption#TLS_TRUSTED_CERTIFICATES} for ours).
     */
    public Builder useTls(Path certChain, Path privateKey) {
      this.tls = new FlightServers.Tls(certChain, privateKey);
      return this;
    }

    /**
     * Answers DoAction of {@code type} with {@code action}, after the same call authentication as
     * every other call (with a secret: the caller presented a token for this server).
     *
     * @throws IllegalArgumentException if the type is the server's own or is taken
     */
    public Builder action(String type, io.sluice.flight.ServerAction action) {
      if (type.equals(io.sluice.flight.protocol.DataPlaneOffer.ACTION) || actions.containsKey(type)) {
        throw new IllegalArgumentException("the action type " + type + " is taken");
      }
      actions.put(type, action);
      return this;
    }

    /** Starts the Flight server and, when a secret is configured, the data plane's transport. */
    public SluiceFlightServer start() throws IOException {
      return new SluiceFlightServer(FlightServers.start(allocator, location, config, authenticator, tls, actions));
    }
  }
}
