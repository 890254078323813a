package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import io.sluice.flight.protocol.DataPlaneOffer;
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
import org.apache.arrow.flight.Result;

/**
 * Decides, for one client and server, whether streams take the data plane: the client has a
 * secret and a transport, the server answers the {@value DataPlaneOffer#ACTION} action, and the
 * transport connection to the address it names authenticates (mutually, with the shared secret)
 * as the node the server named. Any "no" yields the reason and the stream goes over plain Flight.
 * Thread safe: the client serializes calls.
 */
public final class Negotiator implements AutoCloseable {
  private static final long LANDING_IDLE_BYTES = 256L << 20;

  private final TransportConfig config;
  private final long connectTimeoutNanos;
  private final long ioTimeoutNanos;
  private Transport transport;
  private String transportFailure;

  /** The outcome: a session, or why there is none. */
  public record Outcome(Optional<DataPlaneSession> session, String reason) {}

  public Negotiator(TransportConfig config) {
    this.config = config;
    this.connectTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.CONNECT_TIMEOUT_MS));
    this.ioTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.value(TransportKeys.IO_TIMEOUT_MS));
  }

  public synchronized Outcome negotiate(FlightClient flight) {
    if (!config.value(FlightOption.DATA_PLANE)) {
      return none(FlightOption.DATA_PLANE.key() + " is false");
    }
    if (config.value(TransportKeys.SECRET).isEmpty()) {
      return none(TransportKeys.SECRET.key() + " is not set");
    }
    DataPlaneOffer offer;
    try {
      Iterator<Result> results = flight.doAction(new Action(DataPlaneOffer.ACTION));
      if (!results.hasNext()) {
        return none("the server answered the data-plane action with nothing");
      }
      offer = DataPlaneOffer.decode(results.next().getBody());
      results.forEachRemaining(r -> { });
    } catch (FlightRuntimeException e) {
      return none("the server offers no data plane (" + e.status().code() + ": " + e.getMessage() + ")");
    } catch (IllegalArgumentException e) {
      return none("the server's data-plane offer is unreadable: " + e.getMessage());
    }
    Optional<Transport> t = transport();
    if (t.isEmpty()) {
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
    if (c.peerNode() != offer.nodeId()) {
      c.close();
      return none("the transport at " + offer.address() + " is not the one the Flight server named");
    }
    DataPlaneSession s = new DataPlaneSession(t.get(), c, LANDING_IDLE_BYTES, offer,
        ioTimeoutNanos);
    return new Outcome(Optional.of(s), "");
  }

  private Optional<Transport> transport() {
    if (transport == null && transportFailure == null) {
      try {
        transport = Transports.open(config, MessageHandler.REJECT_ALL);
      } catch (TransportException | RuntimeException e) {
        transportFailure = e.getMessage();
      }
    }
    return Optional.ofNullable(transport);
  }

  private static Outcome none(String reason) {
    return new Outcome(Optional.empty(), reason);
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
