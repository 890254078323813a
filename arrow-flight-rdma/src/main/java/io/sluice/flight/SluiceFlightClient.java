package io.sluice.flight;

import io.sluice.flight.client.ClientStreams;
import io.sluice.flight.client.DataPlaneSession;
import io.sluice.flight.client.FlightClients;
import io.sluice.flight.client.Negotiator;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Flight client that READs batch bodies over the Sluice transport when the server offers it and
 * the shared secret matches, and is an ordinary Flight client otherwise: the API is the same
 * either way, and every stream says which path it took.
 *
 * <pre>{@code
 * try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, location,
 *         TransportConfig.of(Map.of("sluice.transport.secret", secret)));
 *      TableReader stream = client.getStream(ticket)) {
 *   while (stream.next()) {
 *     VectorSchemaRoot batch = stream.getRoot();   // vectors over the READ memory, no copy
 *   }
 *   System.out.println("path: " + stream.dataPath());   // verbs, tcp, shm or grpc
 * }
 * }</pre>
 *
 * <p>Negotiation happens once (and again after the transport connection breaks); its outcome is
 * logged once. Thread safe: streams may be opened from several threads. Batches read over the data
 * plane live in registered memory accounted to the given allocator; closing the client while a
 * vector still holds such a batch is safe (the memory is freed when the vector releases it).
 */
public final class SluiceFlightClient implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceFlightClient.class);

  private final BufferAllocator allocator;
  private final FlightClient flight;
  private final TransportConfig config;
  private final Negotiator negotiator;
  private DataPlaneSession session;
  private String fallbackReason;
  private boolean negotiated;

  private final boolean tls;
  private boolean fallbackAuthenticated;

  private SluiceFlightClient(BufferAllocator allocator, FlightClient flight, TransportConfig config,
      Optional<CallToken.Key> key, Location location) {
    this.allocator = allocator;
    this.flight = flight;
    this.config = config;
    this.tls = location.getUri().getScheme().endsWith("+tls");
    this.negotiator = new Negotiator(config, key, location);
  }

  /**
   * A client of the server at {@code location}; {@code config} holds the transport's keys. With a
   * secret, every Flight call (also those of {@link #flight()}) presents its {@link CallToken}; a
   * {@code grpc+tls} location trusts {@link FlightOption#TLS_TRUSTED_CERTIFICATES} when set.
   */
  public static SluiceFlightClient connect(BufferAllocator allocator, Location location, TransportConfig config) {
    Optional<CallToken.Key> key = CallToken.of(config);
    return new SluiceFlightClient(allocator, FlightClients.open(allocator, location, config, key), config, key,
        location);
  }

  /** A client with no data plane: plain Flight. */
  public static SluiceFlightClient connect(BufferAllocator allocator, Location location) {
    return connect(allocator, location, TransportConfig.of(Map.of()));
  }

  /**
   * The ordinary Flight client underneath, for every other call (ListFlights, GetFlightInfo,
   * actions); its calls present the secret's token as this client's do.
   */
  public FlightClient flight() {
    return flight;
  }

  /**
   * Opens the stream of {@code ticket}: over the data plane when negotiated, else DoGet. A
   * data-plane get waits at most the transport's I/O timeout ({@code sluice.transport.ioTimeoutMs})
   * for the server to take it; see {@link #getStream(Ticket, Duration)}.
   */
  public TableReader getStream(Ticket ticket) {
    Optional<DataPlaneSession> s = requiredSession();
    return s.isPresent()
        ? ClientStreams.dataPlaneGet(flight, s.get(), allocator, ticket, config, s.get().timeoutNanos())
        : ClientStreams.grpcGet(flight, ticket);
  }

  /**
   * Opens the stream of {@code ticket}, as {@link #getStream(Ticket)}, waiting at most {@code wait}
   * for a data-plane get: this client holds at most as many gets of the server at once as the
   * server allows one client ({@link #maxDataPlaneGets()}), and one more waits for one of them to
   * end (its reader closed and, on shm, every view of its batches released); a get the server
   * refuses as busy is asked again, backing off, within the same wait. Returns once the server has
   * taken the get. A plain Flight stream does not wait.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException TIMED_OUT naming the bound and {@link
   *     FlightOption#DATA_PLANE_GETS_PER_CLIENT} when none of this client's gets ended in time;
   *     RESOURCE_EXHAUSTED when the server still refused it at the deadline
   */
  public TableReader getStream(Ticket ticket, Duration wait) {
    Optional<DataPlaneSession> s = requiredSession();
    return s.isPresent()
        ? ClientStreams.dataPlaneGet(flight, s.get(), allocator, ticket, config, nanos(wait))
        : ClientStreams.grpcGet(flight, ticket);
  }

  private static long nanos(Duration wait) {
    try {
      return wait.toNanos();
    } catch (ArithmeticException e) {
      return wait.isNegative() ? 0 : Long.MAX_VALUE;
    }
  }

  /**
   * How many data-plane gets of the server this client holds at once (the server's offer); empty
   * when streams are plain Flight.
   */
  public OptionalInt maxDataPlaneGets() {
    return session().map(s -> OptionalInt.of(s.maxGets())).orElse(OptionalInt.empty());
  }

  /**
   * Starts a put of the rows {@code root} will hold (as Flight's {@code startPut}): over the data
   * plane when negotiated, else DoPut.
   */
  public TableWriter startPut(FlightDescriptor descriptor, VectorSchemaRoot root, DictionaryProvider dictionaries) {
    Optional<DataPlaneSession> s = requiredSession();
    return s.isPresent()
        ? ClientStreams.dataPlanePut(flight, s.get(), allocator, descriptor, root, dictionaries, config)
        : ClientStreams.grpcPut(flight, descriptor, root, dictionaries);
  }

  /** The path new streams take: "verbs", "tcp", "shm" or "grpc". */
  public String dataPlane() {
    return session().map(DataPlaneSession::dataPath).orElse("grpc");
  }

  /** Why streams go over plain Flight, when they do. */
  public synchronized Optional<String> fallbackReason() {
    session();
    return Optional.ofNullable(fallbackReason);
  }

  /**
   * The session for a new stream; with {@link FlightOption#REQUIRE_DATA_PLANE}, fails instead of
   * returning none, so nobody can make this client fall back to plain Flight.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException UNAVAILABLE when the data plane is required and unusable
   */
  private synchronized Optional<DataPlaneSession> requiredSession() {
    Optional<DataPlaneSession> s = session();
    if (s.isPresent() || tls) {
      if (s.isEmpty() && config.value(FlightOption.REQUIRE_DATA_PLANE)) {
        throw refuseFallback("the data plane is required (" + FlightOption.REQUIRE_DATA_PLANE.key() + ")");
      }
      return s; // over TLS, plain Flight is encrypted and its answers authenticated
    }
    if (config.value(FlightOption.REQUIRE_DATA_PLANE)) {
      throw refuseFallback("the data plane is required (" + FlightOption.REQUIRE_DATA_PLANE.key() + ")");
    }
    if (config.value(TransportKeys.ENCRYPTION)) {
      throw refuseFallback("this client asked for encryption (" + TransportKeys.ENCRYPTION.key() + ") and plain"
          + " Flight on a grpc:// location is not encrypted (use a grpc+tls location to fall back)");
    }
    if (!fallbackAuthenticated && !config.value(FlightOption.UNSIGNED_FALLBACK)) {
      throw refuseFallback("the answer that would send streams over plaintext gRPC is not signed with the secret,"
          + " so anybody on the path could have given it (a Flight server without the secret: set "
          + FlightOption.UNSIGNED_FALLBACK.key() + "=true, or use a grpc+tls location)");
    }
    return s;
  }

  private org.apache.arrow.flight.FlightRuntimeException refuseFallback(String why) {
    negotiated = false; // the next stream tries again: a refusal never sticks as a downgrade
    return org.apache.arrow.flight.CallStatus.UNAVAILABLE.withDescription(why + "; the data plane cannot be used: "
        + fallbackReason).toRuntimeException();
  }

  private synchronized Optional<DataPlaneSession> session() {
    if (session != null && !session.isOpen()) {
      LOG.info("Flight data plane to {}: the transport connection closed; negotiating again", flight);
      session.close();
      session = null;
      negotiated = false;
    }
    if (!negotiated) {
      negotiated = true;
      Negotiator.Outcome o = negotiator.negotiate(flight);
      session = o.session().orElse(null);
      fallbackReason = session == null ? o.reason() : null;
      fallbackAuthenticated = o.authenticated();
      if (session != null) {
        LOG.info("Flight data plane: batch bodies are READ over {}", session.dataPath());
      } else {
        LOG.info("Flight data plane not used, streams are plain Flight: {}", fallbackReason);
      }
    }
    return Optional.ofNullable(session);
  }

  @Override
  public void close() {
    synchronized (this) {
      if (session != null) {
        session.close();
        session = null;
      }
    }
    negotiator.close();
    try {
      flight.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
