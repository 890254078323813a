package io.sluice.perf.transport;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.time.Duration;

/**
 * The driver's side of one provider: its own transport, a registered destination and an
 * authenticated connection to the server's transport of the same provider. Owns all three and
 * closes them in reverse order. Not thread safe.
 */
final class ProviderClient implements AutoCloseable {
  private static final Duration CONNECT_DEADLINE = Duration.ofSeconds(20);
  private static final Duration READ_DEADLINE = Duration.ofSeconds(30);

  private final Transport transport;
  private final ServerEndpoints.ServedRegion served;
  private final RegisteredRegion destination;
  private final Connection connection;
  private final ReadBench bench;

  private ProviderClient(Transport transport, RegisteredRegion destination, Connection connection,
      ServerEndpoints.ServedRegion served) {
    this.transport = transport;
    this.served = served;
    this.destination = destination;
    this.connection = connection;
    this.bench = new ReadBench(connection, served.descriptor(), destination, READ_DEADLINE);
  }

  /**
   * Opens a transport of the served region's provider and connects to it.
   *
   * @throws IOException if it cannot connect, or the connection's data path is not the provider
   *     asked for (the figures would carry the wrong name)
   */
  static ProviderClient open(ServerEndpoints.ServedRegion served, String secret, int destinationBytes)
      throws IOException {
    Transport t = LoopbackTransports.open(served.provider(), secret, MessageHandler.REJECT_ALL);
    RegisteredRegion destination = null;
    try {
      destination = t.allocate(destinationBytes);
      Connection c = Await.get(t.connect(served.address()), CONNECT_DEADLINE,
          served.provider() + " connect to " + served.address());
      if (!c.dataPath().equals(LoopbackTransports.providerOf(served.provider()))) {
        c.close();
        throw new TransportException("a " + served.provider() + " connection reads through "
            + c.dataPath() + "; refusing to report its figures as " + served.provider());
      }
      return new ProviderClient(t, destination, c, served);
    } catch (IOException | RuntimeException e) {
      if (destination != null) {
        destination.close();
      }
      t.close();
      throw e;
    }
  }

  /**
   * New connections to the server's transport, each connected and authenticated (and, for shm,
   * attached), then closed; adds the nanoseconds of each to {@code samples} until {@code measure}
   * has passed or the samples are full.
   */
  void connectLatency(Duration warmup, Duration measure, LatencySamples samples) throws IOException {
    long warmEnd = System.nanoTime() + warmup.toNanos();
    while (System.nanoTime() < warmEnd) {
      connectOnce();
    }
    long deadline = System.nanoTime() + measure.toNanos();
    while (System.nanoTime() < deadline && !samples.isFull()) {
      long t0 = System.nanoTime();
      Connection c = connectOnce();
      samples.add(System.nanoTime() - t0);
      c.close();
    }
  }

  private Connection connectOnce() throws IOException {
    Connection c = Await.get(transport.connect(served.address()), CONNECT_DEADLINE,
        served.provider() + " connect to " + served.address());
    if (!c.dataPath().equals(LoopbackTransports.providerOf(served.provider()))) {
      c.close();
      throw new TransportException("a " + served.provider() + " connection reads through " + c.dataPath());
    }
    return c;
  }

  ReadBench bench() {
    return bench;
  }

  @Override
  public void close() {
    connection.close();
    destination.close();
    transport.close();
  }
}
