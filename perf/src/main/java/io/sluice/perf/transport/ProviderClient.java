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
  private final RegisteredRegion destination;
  private final Connection connection;
  private final ReadBench bench;

  private ProviderClient(Transport transport, RegisteredRegion destination, Connection connection,
      ServerEndpoints.ServedRegion served) {
    this.transport = transport;
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
