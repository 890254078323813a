package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A connect whose peer refuses or resets it before the handshake ends tries again within the
 * connect deadline; one that fails authentication does not.
 */
class ConnectRetryTest {
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void close() {
    peers.close();
  }

  @Test
  void connectionsResetBeforeTheHandshakeAreTriedAgain() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport client = peers.open(false, Map.of());
    try (ResettingFront front = new ResettingFront(server.localAddress(), 3);
        Connection c = await(client.connect(front.address()))) {
      assertEquals("ok:after resets", text(await(c.request(message("after resets")))));
      assertEquals(4, front.accepted.get(), "three resets, then the connection that got through");
    }
  }

  @Test
  void aFailedAuthenticationIsNotTriedAgain() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport intruder = peers.open(false, Map.of(TransportOption.SECRET.key(), "not-the-secret-of-this-test"));
    try (ResettingFront front = new ResettingFront(server.localAddress(), 0)) {
      assertFailsWith(AuthenticationFailedException.class, intruder.connect(front.address()));
      assertEquals(1, front.accepted.get(), "an authentication failure was retried");
    }
  }

  @Test
  void aPortNobodyListensOnFailsAtOnceNotAtTheDeadline() throws Exception {
    // A connect deadline far beyond the test's own: retrying a refusal would outlast the latter.
    Transport client = peers.open(false, Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "600000"));
    try (Socket reserved = new Socket()) {
      // Bound and never listening: the port refuses connects, and no other process can listen on
      // it meanwhile, as it could on a port closed after picking it.
      reserved.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      assertFailsWith(PeerClosedException.class, client.connect(new NodeAddress("127.0.0.1", reserved.getLocalPort())));
    }
  }

  @Test
  void aPeerThatKeepsResettingFailsAtTheDeadline() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport client = peers.open(false, Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "600"));
    try (ResettingFront front = new ResettingFront(server.localAddress(), Integer.MAX_VALUE)) {
      // With the last reset when too little time is left for another try, or the deadline itself
      // when it passes during one: on a loaded machine a try may take longer than what was left.
      Throwable e = failureOf(client.connect(front.address()));
      assertTrue(e instanceof PeerClosedException || e instanceof TransportTimeoutException,
          () -> "a connect reset again and again failed with " + TransportTestSupport.describe(e));
      // Counted when the front gets round to accepting it, which may be after the client gave up.
      Eventually.holds("a second attempt within the deadline", () -> front.accepted.get() > 1);
    }
  }

  @Test
  void connectsBeyondTheConnectThreadsQueueAndKeepTheirDeadline() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport client = peers.open(false, Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "1500"));
    // Listens and never accepts: the kernel completes each connect and the handshake waits for an
    // answer that never comes, holding its thread until the deadline.
    try (ServerSocket silent = new ServerSocket(0, 64, InetAddress.getLoopbackAddress())) {
      NodeAddress address = new NodeAddress("127.0.0.1", silent.getLocalPort());
      List<CompletableFuture<Connection>> stuck = new ArrayList<>();
      for (int i = 0; i < Carrier.CONNECT_THREADS + 4; i++) {
        stuck.add(client.connect(address));
      }
      List<Thread> connectThreads = TransportTestSupport.carrierThreads(client).stream()
          .filter(t -> t.getName().startsWith("sluice-connect-")).toList();
      assertTrue(connectThreads.size() <= Carrier.CONNECT_THREADS,
          () -> stuck.size() + " connects at once started " + connectThreads.size() + " threads");
      // Those that waited for a thread fail at their deadline too, counted from the call.
      for (CompletableFuture<Connection> f : stuck) {
        assertFailsWith(TransportTimeoutException.class, f);
      }
    }
    try (Connection c = await(client.connect(server.localAddress()))) {
      assertEquals("ok:after the queue", text(await(c.request(message("after the queue")))));
    }
  }

  /**
   * A listener in front of a server: resets the first {@code resets} connections it accepts, and
   * relays the later ones to the server byte for byte.
   */
  private static final class ResettingFront implements AutoCloseable {
    final AtomicInteger accepted = new AtomicInteger();
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    ResettingFront(NodeAddress server, int resets) throws IOException {
      listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
      Thread t = new Thread(() -> {
        try {
          while (true) {
            Socket s = listener.accept();
            sockets.add(s);
            if (accepted.incrementAndGet() <= resets) {
              s.setSoLinger(true, 0);
              s.close();
              continue;
            }
            Socket upstream = new Socket(server.host(), server.port());
            sockets.add(upstream);
            pump(s, upstream);
            pump(upstream, s);
          }
        } catch (IOException closed) {
          // the listener closed
        }
      }, "resetting-front");
      t.setDaemon(true);
      t.start();
    }

    NodeAddress address() {
      return new NodeAddress("127.0.0.1", listener.getLocalPort());
    }

    private void pump(Socket from, Socket to) {
      Thread t = new Thread(() -> {
        byte[] buf = new byte[8192];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
          for (int n; (n = in.read(buf)) >= 0; ) {
            out.write(buf, 0, n);
          }
        } catch (IOException closed) {
          // either end closed
        }
      }, "resetting-front-pump");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
