package io.sluice.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RawFrameSocket;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A handshake slower than a flood: a client says HELLO, and before it answers the challenge
 * {@link #FLOOD} silent sockets arrive from several loopback addresses, four times the server's
 * bound on unauthenticated connections, so most of them must be pushed out. The client that said
 * HELLO is never the one pushed out; it then completes its handshake.
 */
@Timeout(120)
class SlowHandshakeFloodTest {
  private static final int BOUND = 8;
  private static final int FLOOD = 4 * BOUND;
  private static final int ADDRESSES = 8;

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));
  private final List<Socket> flood = new ArrayList<>();

  @AfterEach
  void close() {
    for (Socket s : flood) {
      try {
        s.close();
      } catch (IOException ignored) {
        // test clean-up
      }
    }
    harness.close();
  }

  @Test
  void aClientThatSaidHelloOutlivesAFloodOfSilentSockets() throws Exception {
    Transport server = harness.open(MessageHandler.REJECT_ALL, Map.of(
        TransportOption.MAX_UNAUTHENTICATED.key(), String.valueOf(BOUND),
        TransportOption.MAX_UNAUTHENTICATED_PER_ADDRESS.key(), String.valueOf(BOUND),
        TransportOption.HANDSHAKE_TIMEOUT_MS.key(), "60000"));
    InetSocketAddress at = new InetSocketAddress(server.localAddress().host(), server.localAddress().port());
    try (RawFrameSocket slow = new RawFrameSocket(server.localAddress())) {
      Optional<RawFrameSocket.Frame> last = slow.authenticateSlowly(TransportTestSupport.SECRET,
          NodeIdentity.generate(), () -> floodAndWaitForEvictions(at));
      assertEquals(Optional.of(FrameType.AUTH_OK), last.map(RawFrameSocket.Frame::type),
          "the client that said HELLO was pushed out by silent sockets");
    }
  }

  /** Opens the flood and waits until the server has pushed out all but {@code BOUND - 1} of it. */
  private void floodAndWaitForEvictions(InetSocketAddress at) {
    try {
      for (int i = 0; i < FLOOD; i++) {
        Socket s = new Socket();
        flood.add(s);
        s.bind(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 3, (byte) (1 + i % ADDRESSES)}), 0));
        s.connect(at, 10_000);
        s.setSoTimeout(1);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    boolean[] closed = new boolean[FLOOD];
    TransportTestSupport.eventually("the server pushed out " + (FLOOD - BOUND + 1) + " flood sockets",
        Duration.ofSeconds(60), () -> {
          int n = 0;
          for (int i = 0; i < FLOOD; i++) {
            closed[i] = closed[i] || closedByServer(flood.get(i));
            n += closed[i] ? 1 : 0;
          }
          return n >= FLOOD - BOUND + 1;
        });
  }

  /** Whether the server ended this silent socket (it sends nothing else to one). */
  private static boolean closedByServer(Socket s) {
    try {
      s.getInputStream().read(); // the end of the stream, or the first byte of an ERROR frame before it
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }
}
