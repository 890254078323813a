package io.sluice.flight.client;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.transport.Connection;
import io.sluice.transport.Transport;
import io.sluice.transport.memory.RegisteredAllocator;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client's authenticated transport connection to one Flight server's data plane, with the
 * client's own transport (its landing memory, and the regions a server READs during puts), and
 * its share of the server's gets: no more than the server's offer allows are open at once.
 * Thread safe; owned by the {@link io.sluice.flight.SluiceFlightClient}, which closes it.
 */
public final class DataPlaneSession implements AutoCloseable {
  private final Transport transport;
  private final Connection connection;
  private final RegisteredAllocator memory;
  private final LandingPool landing;
  private final DataPlaneOffer offer;
  private final long timeoutNanos;
  private final GetShare gets;
  private final java.util.Set<Runnable> callsAwaitingViews = java.util.concurrent.ConcurrentHashMap.newKeySet();

  DataPlaneSession(Transport transport, Connection connection, long landingIdleBytes, DataPlaneOffer offer,
      long timeoutNanos) {
    this.transport = transport;
    this.connection = connection;
    this.memory = RegisteredAllocator.root("flight session with " + offer.address(), transport);
    this.landing = new LandingPool(memory, landingIdleBytes);
    this.offer = offer;
    this.timeoutNanos = timeoutNanos;
    this.gets = new GetShare(offer.maxStreams(), "the server whose transport is at " + offer.address());
  }

  /** A single-use grant for the next stream, asked for over the authenticated connection. */
  public byte[] grant() throws ExecutionException, TimeoutException, InterruptedException {
    ByteBuffer reply = connection.request(DataPlaneProtocol.grantRequest()).get(timeoutNanos, TimeUnit.NANOSECONDS);
    return DataPlaneProtocol.grantReply(reply);
  }

  /**
   * A place for one more get of this server, waiting at most {@code timeoutNanos} while this
   * client holds as many as the server allows; the get gives it back once its call has ended.
   *
   * @throws TimeoutException naming the bound and its key, if none was given back in time
   * @throws IllegalStateException if the session is closed
   */
  GetShare.Place takeGet(long timeoutNanos) throws TimeoutException, InterruptedException {
    return gets.take(timeoutNanos);
  }

  /** The most gets of this server this client holds at once: what the server's offer allows. */
  public int maxGets() {
    return gets.max();
  }

  /** The deadline of a request over the connection (the transport's I/O timeout). */
  public long timeoutNanos() {
    return timeoutNanos;
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

  /** The server transport's node id, which its connection proved with the key the offer named. */
  public long serverNode() {
    return connection.peerNode();
  }

  /** "verbs", "tcp" or "shm". */
  public String dataPath() {
    return connection.dataPath();
  }

  public boolean isOpen() {
    return connection.isOpen();
  }

  /**
   * Registers the ending of a call that waits for its views to be released; {@link #close()} ends
   * it at once instead (closing the client releases what its views hold on the server).
   */
  void awaitingViews(Runnable endCall) {
    callsAwaitingViews.add(endCall);
  }

  /** The call ended on its own: {@link #close()} leaves it alone. */
  void viewsReleased(Runnable endCall) {
    callsAwaitingViews.remove(endCall);
  }

  @Override
  public void close() {
    gets.close();
    for (Runnable endCall : List.copyOf(callsAwaitingViews)) {
      endCall.run();
    }
    connection.close();
    landing.close();
    memory.shutdown(); // regions still in vectors or puts are freed when they come back
  }
}
