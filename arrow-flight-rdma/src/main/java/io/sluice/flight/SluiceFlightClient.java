package io.sluice.flight;

import io.sluice.flight.client.ClientStreams;
import io.sluice.flight.client.DataPlaneSession;
import io.sluice.flight.client.FlightClients;
import io.sluice.flight.client.Negotiator;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.util.Map;
import java.util.Optional;
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

  /** Opens the stream of {@code ticket}: over the data plane when negotiated, else DoGet. */
  public TableReader getStream(Ticket ticket) {
    Optional<DataPlaneSession> s = requiredSession();
    return s.isPresent()
        ? ClientStreams.dataPlaneGet(flight, s.get(), allocator, ticket, config)
        : ClientStreams.grpcGet(flight, ticket);
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
