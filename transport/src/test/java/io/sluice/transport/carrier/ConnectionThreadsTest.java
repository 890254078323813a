package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Many connections cost no thread each, on either side: one transport connects 300 times to
 * another, and every connection READs, on the same fixed set of threads.
 */
class ConnectionThreadsTest {
  private static final int CONNECTIONS = 300;
  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  @Test
  void threeHundredConnectionsShareTheSelectorThreads() throws Exception {
    Transport server = harness.open(MessageHandler.REJECT_ALL);
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    List<Connection> connections = new ArrayList<>();
    try (RegisteredRegion src = server.allocate(4096); RegisteredRegion dst = client.allocate(4096)) {
      fillPattern(src, 11);
      Connection first = TransportHarness.connect(client, server);
      connections.add(first);
      await(first.read(src.descriptor(), 0, dst, 0, 4096));
      // The two transports' own threads: the JVM's (compiler threads, other tests' transports
      // still ending) come and go on their own. The pools that start threads as work comes may
      // add a few (the second proof thread, a connect thread that starts while the last one
      // returns to its pool), however many connections follow.
      List<Thread> before = TransportTestSupport.carrierThreads(server, client);
      for (int i = 1; i < CONNECTIONS; i++) {
        connections.add(TransportHarness.connect(client, server));
      }
      for (Connection c : connections) {
        await(c.read(src.descriptor(), 0, dst, 0, 4096));
      }
      TransportTestSupport.assertPattern(11, 0, dst, 0, 4096);
      List<Thread> after = TransportTestSupport.carrierThreads(server, client);
      System.out.printf("connection threads test: %d connections, transport threads %d before the last %d, %d after%n",
          connections.size(), before.size(), CONNECTIONS - 1, after.size());
      assertTrue(after.size() - before.size() <= 4, () -> "the transports' threads grew from " + names(before) + " to "
          + names(after));
    } finally {
      connections.forEach(Connection::close);
    }
  }

  private static List<String> names(List<Thread> threads) {
    return threads.stream().map(Thread::getName).sorted().toList();
  }
}
