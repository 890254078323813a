package io.sluice.flight.client;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.transport.Connection;
import io.sluice.transport.Transport;
import io.sluice.transport.memory.RegisteredAllocator;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client's authenticated transport connection to one Flight server's data plane, with the
 * client's own transport (its landing memory, and the regions a server READs during puts).
 * Thread safe; owned by the {@link io.sluice.flight.SluiceFlightClient}, which closes it.
 */
public final class DataPlaneSession implements AutoCloseable {
  private final Transport transport;
  private final Connection connection;
  private final RegisteredAllocator memory;
  private final LandingPool landing;
  private final DataPlaneOffer offer;
  private final long timeoutNanos;

  DataPlaneSession(Transport transport, Connection connection, long landingIdleBytes, DataPlaneOffer offer,
      long timeoutNanos) {
    this.transport = transport;
    this.connection = connection;
    this.memory = RegisteredAllocator.root("flight session with " + offer.address(), transport);
    this.landing = new LandingPool(memory, landingIdleBytes);
    this.offer = offer;
    this.timeoutNanos = timeoutNanos;
  }

  /** A single-use grant for the next stream, asked for over the authenticated connection. */
  public byte[] grant() throws ExecutionException, TimeoutException, InterruptedException {
    ByteBuffer reply = connection.request(DataPlaneProtocol.grantRequest()).get(timeoutNanos, TimeUnit.NANOSECONDS);
    return DataPlaneProtocol.grantReply(reply);
  }

  public Transport transport() {
    return transport;
  }

  public Connection connection() {
    return connection;
  }

  /** The registered memory of this session: its landing pool and its puts' staging. */
  public RegisteredAllocator memory() {
    return memory;
  }

  public LandingPool landing() {
    return landing;
  }

  public long serverNode() {
    return offer.nodeId();
  }

  /** "verbs", "tcp" or "shm". */
  public String dataPath() {
    return connection.dataPath();
  }

  public boolean isOpen() {
    return connection.isOpen();
  }

  @Override
  public void close() {
    connection.close();
    landing.close();
    memory.shutdown(); // regions still in vectors or puts are freed when they come back
  }
}
