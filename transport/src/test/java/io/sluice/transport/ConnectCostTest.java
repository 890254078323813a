package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Connects to one tcp transport over and over, plain and encrypted, and prints what a connect
 * with its handshake costs on this machine (median and 90th percentile, after a warm-up). Every
 * connection must name the server's node id as its peer. Prints the figures; asserts no time.
 */
class ConnectCostTest {
  private static final int WARM_UP = 40;
  private static final int CONNECTS = 120;

  @Test
  void connectCost() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    for (String encrypt : new String[] {"false", "true"}) {
      try (TransportHarness harness = new TransportHarness("tcp", Map.of(TransportOption.SHM_ENABLED.key(), "false",
          TransportOption.ENCRYPTION.key(), encrypt))) {
        Transport server = harness.open(MessageHandler.REJECT_ALL);
        Transport client = harness.open(MessageHandler.REJECT_ALL);
        long[] nanos = new long[CONNECTS];
        for (int i = -WARM_UP; i < CONNECTS; i++) {
          long start = System.nanoTime();
          try (Connection c = await(client.connect(server.localAddress()))) {
            if (i >= 0) {
              nanos[i] = System.nanoTime() - start;
            }
            assertEquals(server.nodeId(), c.peerNode(), "the connection names another node than the server");
          }
        }
        Arrays.sort(nanos);
        System.out.printf("connect+handshake (encryption=%s): median %.3f ms, p90 %.3f ms over %d connects%n",
            encrypt, nanos[CONNECTS / 2] / 1e6, nanos[CONNECTS * 9 / 10] / 1e6, CONNECTS);
      }
    }
  }
}
