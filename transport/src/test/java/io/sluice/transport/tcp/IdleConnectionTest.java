package io.sluice.transport.tcp;

import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.carrier.Carrier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Connections a peer opens and leaves cost the server little and keep nobody out: at the
 * connection bound the authenticated connection quiet longest (past the idle timeout) makes room
 * for a new one, a busy or recently used one never does, and an idle encrypted connection holds
 * no sealing buffer.
 */
class IdleConnectionTest {
  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private static final MessageHandler ECHO = (peer, request) -> CompletableFuture.completedFuture(request);

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  private static void echo(Connection c, String text) {
    ByteBuffer answer = await(c.request(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8))));
    assertEquals(text, StandardCharsets.UTF_8.decode(answer).toString());
  }

  @Test
  void atTheBoundTheConnectionIdleLongestMakesRoom() throws Exception {
    Transport server = harness.open(ECHO, Map.of(TransportOption.MAX_CONNECTIONS.key(), "2",
        TransportOption.IDLE_TIMEOUT_MS.key(), "300"));
    Carrier carrier = ((TcpTransport) server).carrier();
    Connection first = TransportHarness.connect(harness.open(ECHO), server);
    echo(first, "first");
    // The quiet times themselves, not a wait for anything: a loaded machine only lengthens them,
    // and the first stays quiet longer than the second whatever they come to.
    Thread.sleep(200);
    Connection second = TransportHarness.connect(harness.open(ECHO), server);
    echo(second, "second");
    Thread.sleep(400); // both past the idle timeout now, the first longer

    Connection third = TransportHarness.connect(harness.open(ECHO), server);
    echo(third, "third");
    eventually("the first connection is closed", DEADLINE, () -> !first.isOpen());
    assertTrue(second.isOpen(), "the second connection, idle for a shorter time, was closed");
    echo(second, "second again");
    // The server counts a session out as it finishes closing it, after the peer may have seen the close.
    Eventually.reaches("sessions open on the server", 2, carrier::sessionCount);
    assertInstanceOf(PeerClosedException.class, failureOf(first.request(ByteBuffer.wrap(new byte[1]))));
  }

  @Test
  void withinTheIdleTimeoutTheBoundRefusesNewConnectionsAndKeepsTheOldOnes() throws Exception {
    Transport server = harness.open(ECHO, Map.of(TransportOption.MAX_CONNECTIONS.key(), "1",
        TransportOption.IDLE_TIMEOUT_MS.key(), "60000", TransportOption.CONNECT_TIMEOUT_MS.key(), "2000"));
    Connection held = TransportHarness.connect(harness.open(ECHO), server);
    echo(held, "held");
    Transport late = harness.open(ECHO);
    assertInstanceOf(TransportException.class, failureOf(late.connect(server.localAddress()), DEADLINE));
    assertTrue(held.isOpen());
    echo(held, "still served");
  }

  /**
   * Sockets that never authenticate neither make room (they close nobody) nor take it (an honest
   * peer that authenticates still gets in): only a peer that proved the secret may displace an
   * idle connection.
   */
  @Test
  void connectionsThatNeverAuthenticateNeitherEvictNorLockOut() throws Exception {
    Transport server = harness.open(ECHO, Map.of(TransportOption.MAX_CONNECTIONS.key(), "1",
        TransportOption.IDLE_TIMEOUT_MS.key(), "100"));
    Carrier carrier = ((TcpTransport) server).carrier();
    Connection idle = TransportHarness.connect(harness.open(ECHO), server);
    echo(idle, "idle");
    List<java.net.Socket> bare = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        bare.add(new java.net.Socket(server.localAddress().host(), server.localAddress().port()));
      }
      Eventually.reaches("bare connections the server holds unauthenticated", 4, carrier::unauthenticatedCount);
      Thread.sleep(400); // the idle connection's quiet time, past the idle timeout
      assertTrue(idle.isOpen(), "a bare TCP connect closed an authenticated connection");
      Connection honest = TransportHarness.connect(harness.open(ECHO), server);
      echo(honest, "honest");
      eventually("the idle connection made room", DEADLINE, () -> !idle.isOpen());
    } finally {
      for (java.net.Socket b : bare) {
        b.close();
      }
    }
  }

  @Test
  void aConnectionWaitingForItsAnswerIsNotIdle() throws Exception {
    CompletableFuture<ByteBuffer> slowAnswer = new CompletableFuture<>();
    CountDownLatch asked = new CountDownLatch(1);
    MessageHandler slow = (peer, request) -> {
      asked.countDown();
      return slowAnswer;
    };
    Transport server = harness.open(slow, Map.of(TransportOption.MAX_CONNECTIONS.key(), "1",
        TransportOption.IDLE_TIMEOUT_MS.key(), "100", TransportOption.CONNECT_TIMEOUT_MS.key(), "2000"));
    Connection waiting = TransportHarness.connect(harness.open(ECHO), server);
    CompletableFuture<ByteBuffer> pending = waiting.request(ByteBuffer.wrap(new byte[] {7}));
    // The request must be in the handler before the connection is quiet for long: a request
    // still on its way would leave a connection that is idle indeed.
    assertTrue(asked.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS), "the request never reached the handler");
    Thread.sleep(300); // quiet past the idle timeout while the answer is awaited
    Transport late = harness.open(ECHO);
    assertInstanceOf(TransportException.class, failureOf(late.connect(server.localAddress()), DEADLINE));
    slowAnswer.complete(ByteBuffer.wrap(new byte[] {8}));
    assertEquals(8, await(pending).get());
  }

  @Test
  void idleEncryptedConnectionsHoldNoSealingBuffer() throws Exception {
    Map<String, String> encrypted = Map.of(TransportOption.ENCRYPTION.key(), "true");
    Transport server = harness.open(ECHO, encrypted);
    Carrier serverCarrier = ((TcpTransport) server).carrier();
    List<Transport> clients = List.of(harness.open(ECHO, encrypted), harness.open(ECHO, encrypted),
        harness.open(ECHO, encrypted));
    for (Transport client : clients) {
      Connection c = TransportHarness.connect(client, server);
      assertTrue(c.encrypted());
      for (int i = 0; i < 20; i++) {
        byte[] big = new byte[60_000 + i];
        big[i] = (byte) i;
        ByteBuffer answer = await(c.request(ByteBuffer.wrap(big)));
        assertEquals(big.length, answer.remaining());
        assertEquals((byte) i, answer.get(i));
      }
    }
    eventually("every connection gave its sealing buffer back", DEADLINE,
        () -> serverCarrier.sealBuffersHeld() == 0
            && clients.stream().allMatch(t -> ((TcpTransport) t).carrier().sealBuffersHeld() == 0));
    assertEquals(3, serverCarrier.sessionCount());
  }
}
