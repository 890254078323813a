package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.ClientBinding;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Result;

/**
 * Decides, for one client and server, whether streams take the data plane: the client has a
 * secret and a transport, the server answers the {@value DataPlaneOffer#ACTION} action with an
 * offer signed under the secret for this client's nonce and audience, and the transport connection
 * to the address it names authenticates (mutually, with the shared secret) with the identity key
 * the offer names. Any "no" yields the reason and whether it is authenticated: one nothing signed
 * (an unsigned offer or refusal, a transport that proved another key) fails the stream unless the
 * client allows the unsigned fallback. Thread safe: the client serializes calls.
 */
public final class Negotiator implements AutoCloseable {
  private static final long LANDING_IDLE_BYTES = 256L << 20;

  private final TransportConfig config;
  private final long connectTimeoutNanos;
  private final long ioTimeoutNanos;
  private Transport transport;
  private String transportFailure;

  /**
   * The outcome: a session, or why there is none; {@code authenticated} when that "no" is the
   * server's own, signed with the secret (or needs no server: this client's own settings), and not
   * an answer anybody on the path could have given.
   */
  public record Outcome(Optional<DataPlaneSession> session, String reason, boolean authenticated) {}

  private final Optional<io.sluice.flight.CallToken.Key> key;
  private final String server;
  private final String audience;
  private final java.security.SecureRandom random = new java.security.SecureRandom();

  /**
   * @param location the Flight location this client was given (its own configuration, not anything
   *     the server says): its transport listens toward that host, and a signed answer must name
   *     that location's audience, the one its tokens name
   */
  public Negotiator(TransportConfig config, Optional<io.sluice.flight.CallToken.Key> key, Location location) {
    this.config = config;
    this.server = location.getUri().getHost();
    this.audience = io.sluice.flight.CallToken.audienceOf(location);
    this.key = key;
    this.connectTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.CONNECT_TIMEOUT_MS));
    this.ioTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.IO_TIMEOUT_MS));
  }

  public synchronized Outcome negotiate(FlightClient flight) {
    if (!config.value(FlightOption.DATA_PLANE)) {
      return own(FlightOption.DATA_PLANE.key() + " is false");
    }
    if (config.value(TransportKeys.SECRET).isEmpty() || key.isEmpty()) {
      return own(TransportKeys.SECRET.key() + " is not set");
    }
    DataPlaneOffer offer;
    byte[] nonce = new byte[16];
    random.nextBytes(nonce);
    try {
      Iterator<Result> results = flight.doAction(new Action(DataPlaneOffer.ACTION, nonce));
      if (!results.hasNext()) {
        return none("the server answered the data-plane action with nothing");
      }
      byte[] answer = results.next().getBody();
      byte[] signature = results.hasNext() ? results.next().getBody() : null;
      results.forEachRemaining(r -> { });
      boolean signed = key.get().verifySignature(signature, DataPlaneOffer.SIGNATURE_LABEL, nonce,
          audience.getBytes(java.nio.charset.StandardCharsets.UTF_8), answer);
      Optional<String> refused = DataPlaneOffer.refusalReason(answer);
      if (refused.isPresent()) {
        return signed ? new Outcome(Optional.empty(), "the server (signed) offers no data plane: " + refused.get(), true)
            : none("an unsigned refusal of the data plane: " + refused.get());
      }
      // An offer on the path could name another node of the cluster, which holds the secret and
      // passes the handshake: only the server's signature says the node is the server's.
      if (!signed) {
        return none("an unsigned data-plane offer (" + (signature == null ? "no signature" : "its signature does not"
            + " verify under the secret for " + audience) + "): anybody on the path could have sent it");
      }
      offer = DataPlaneOffer.decode(answer);
    } catch (FlightRuntimeException e) {
      return none("the server offers no data plane (" + e.status().code() + ": " + e.getMessage() + ")");
    } catch (IllegalArgumentException e) {
      return none("the server's data-plane offer is unreadable: " + e.getMessage());
    }
    Optional<Transport> t = transport();
    if (t.isEmpty()) {
      // Not a "no" of this client's settings: fail closed as for any answer nobody signed.
      return none("the client's transport did not start: " + transportFailure);
    }
    Connection c;
    try {
      c = t.get().connect(offer.address()).get(connectTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      return none("the transport at " + offer.address() + " refused us: " + e.getCause().getMessage());
    } catch (TimeoutException e) {
      return none("the transport at " + offer.address() + " did not answer within the connect deadline");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return none("interrupted");
    }
    // The whole key, not its 64-bit node id: another key with the same id proves nothing here.
    if (!offer.names(c.peerIdentityKey())) {
      c.close();
      return none(String.format("the transport at %s proved another identity key (node %016x) than the one the"
          + " Flight server named (node %016x)", offer.address(), c.peerNode(), offer.nodeId()));
    }
    DataPlaneSession s = new DataPlaneSession(t.get(), c, LANDING_IDLE_BYTES, offer,
        ioTimeoutNanos);
    return new Outcome(Optional.of(s), "", true);
  }

  /** This client's transport, opened on first use listening where its traffic to the server leaves from. */
  private Optional<Transport> transport() {
    if (transport == null && transportFailure == null) {
      try {
        transport = Transports.open(ClientBinding.toward(config, server), MessageHandler.REJECT_ALL);
      } catch (TransportException | RuntimeException e) {
        transportFailure = e.toString();
      }
    }
    return Optional.ofNullable(transport);
  }

  /** A "no" that nothing authenticated: the server's unsigned answer, or what happened on the way. */
  private static Outcome none(String reason) {
    return new Outcome(Optional.empty(), reason, false);
  }

  /** A "no" of this client's own settings. */
  private static Outcome own(String reason) {
    return new Outcome(Optional.empty(), reason, true);
  }

  public long ioTimeoutNanos() {
    return ioTimeoutNanos;
  }

  @Override
  public synchronized void close() {
    if (transport != null) {
      transport.close();
    }
  }
}
