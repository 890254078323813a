package io.sluice.spark.shuffle.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ReadRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The executor's shared connections to its peers, with connections that only know whether they are
 * open, so the order of events is the test's: no transport, no Spark. The bound against real
 * transports: {@link PeerConnectionsTcpTest}.
 */
class PeerConnectionsTest {
  private static final NodeAddress A = new NodeAddress("10.0.0.1", 7001);
  private static final NodeAddress B = new NodeAddress("10.0.0.2", 7002);

  /** A connection that only knows whether it is open. */
  private static final class FakeConnection implements Connection {
    private final NodeAddress peer;
    private boolean open = true;

    FakeConnection(NodeAddress peer) {
      this.peer = peer;
    }

    @Override
    public NodeAddress peer() {
      return peer;
    }

    @Override
    public long peerNode() {
      return peer.port();
    }

    @Override
    public byte[] peerIdentityKey() {
      return new byte[32];
    }

    @Override
    public String dataPath() {
      return "tcp";
    }

    @Override
    public boolean isOpen() {
      return open;
    }

    @Override
    public List<CompletableFuture<Void>> readBatch(List<ReadRequest> requests) {
      throw new UnsupportedOperationException("no READs in this test");
    }

    @Override
    public CompletableFuture<ByteBuffer> request(ByteBuffer message) {
      throw new UnsupportedOperationException("no requests in this test");
    }

    @Override
    public void close() {
      open = false;
    }
  }

  private final List<CompletableFuture<Connection>> opened = new ArrayList<>();
  private final List<CompletableFuture<Connection>> pending = new ArrayList<>();

  /** Latencies of first connections, as PeerConnections reported them. */
  private final List<Long> firstConnects = new ArrayList<>();

  private PeerConnections connections(boolean completeAtOnce) {
    return connections(completeAtOnce, 16);
  }

  private PeerConnections connections(boolean completeAtOnce, int bound) {
    return new PeerConnections(peer -> {
      CompletableFuture<Connection> f = new CompletableFuture<>();
      if (completeAtOnce) {
        f.complete(new FakeConnection(peer));
      } else {
        pending.add(f);
      }
      opened.add(f);
      return f;
    }, bound, 60_000, firstConnects::add);
  }

  /** The connection a use of the peer gets (once it is open), used for nothing. */
  private static CompletableFuture<Connection> connection(PeerConnections c, NodeAddress peer) {
    return c.use(peer, CompletableFuture::completedFuture);
  }

  @Test
  void connectingAheadIsBoundedSharedAndClosedWithTheRest() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    PeerConnections c = connections(false);
    CompletableFuture<Connection> a = connection(c, A);
    assertEquals(1, c.connectAhead(List.of(A, B, B, c3), 1), "A is being opened already; one more at most");
    assertEquals(2, opened.size());
    assertEquals(1, c.connectAhead(List.of(A, B, c3), 5), "only c3 is left to open");
    assertEquals(3, opened.size());
    CompletableFuture<Connection> b = connection(c, B);
    assertEquals(3, opened.size(), "a task gets the connection opened ahead");
    pending.get(0).complete(new FakeConnection(A));
    pending.get(1).complete(new FakeConnection(B));
    assertSame(pending.get(0).join(), a.join());
    assertSame(pending.get(1).join(), b.join());
    c.close();
    assertFalse(pending.get(1).join().isOpen(), "closed with the others");
    FakeConnection late = new FakeConnection(c3);
    pending.get(2).complete(late);
    assertFalse(late.isOpen(), "one still being opened is closed when it completes");
  }

  @Test
  void connectingAheadNeverPassesTheBound() {
    try (PeerConnections c = connections(true, 2)) {
      assertEquals(2, c.connectAhead(List.of(A, B, new NodeAddress("10.0.0.3", 7003)), 16));
      assertEquals(0, c.connectAhead(List.of(new NodeAddress("10.0.0.4", 7004)), 16), "idle ones are not closed for it");
      assertEquals(new PeerConnections.Stats(2, 2, 2, 0, 0, 0, 0), c.stats());
    }
  }

  @Test
  void aTaskChoosesWhatTheBoundHasRoomForThePeersItHasConnectionsToFirst() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    NodeAddress d4 = new NodeAddress("10.0.0.4", 7004);
    NodeAddress e5 = new NodeAddress("10.0.0.5", 7005);
    try (PeerConnections c = connections(true, 2)) {
      assertEquals(List.of(A, B), List.copyOf(c.choose(List.of(A, B, c3))), "nothing connected: in the order given");
      assertEquals(1, c.stats().passedOn());
      connection(c, c3).join();
      connection(c, d4).join().close(); // a dead connection counts as none
      assertEquals(List.of(A, c3), List.copyOf(c.choose(List.of(A, B, c3, d4))),
          "the connected peer, then the first of the others, in the order given");
      assertEquals(List.of(A, c3), List.copyOf(c.choose(List.of(A, c3, c3))), "a repeated peer counts once");
      // Another task expects e5: one connection's room is its, whoever asks next.
      PeerConnections.Expectation other = c.expect(e5);
      assertEquals(List.of(c3), List.copyOf(c.choose(List.of(A, B, c3))), "room for one, the connected peer");
      assertEquals(List.of(A, e5), List.copyOf(c.choose(List.of(A, B, e5))),
          "a task that reads e5 too shares its connection: it takes no room from it");
      other.close();
      assertEquals(List.of(A, B), List.copyOf(c.choose(List.of(A, B))), "room again once the other task is done");
      assertEquals(1 + 2 + 2 + 1, c.stats().passedOn());
      assertEquals(2, opened.size(), "choosing opens nothing");
    }
  }

  @Test
  void aTaskChoosesNoneWhereOtherTasksHoldTheWholeBoundUnlessItSharesTheirPeers() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    try (PeerConnections c = connections(true, 1)) {
      PeerConnections.Expectation other = c.expect(B);
      assertEquals(List.of(), List.copyOf(c.choose(List.of(A, c3))), "no room: all through the other path");
      assertEquals(List.of(B), List.copyOf(c.choose(List.of(A, B, c3))), "B's connection is shared");
      assertEquals(2 + 2, c.stats().passedOn());
      other.close();
    }
  }

  @Test
  void onlyEachPeersFirstUsableConnectionIsTimed() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> a = connection(c, A);
      CompletableFuture<Connection> b = connection(c, B);
      assertEquals(List.of(), firstConnects, "nothing is usable yet");
      pending.get(1).completeExceptionally(new IOException("refused"));
      assertTrue(b.isCompletedExceptionally());
      assertEquals(List.of(), firstConnects, "a failed connection is not a first connection");
      pending.get(0).complete(new FakeConnection(A));
      assertEquals(1, firstConnects.size());
      assertTrue(firstConnects.get(0) >= 0);
      // B's second try is its first usable connection; A's reconnection after a close is not timed.
      connection(c, B);
      pending.get(2).complete(new FakeConnection(B));
      a.join().close();
      connection(c, A);
      pending.get(3).complete(new FakeConnection(A));
      assertEquals(2, firstConnects.size());
    }
  }

  @Test
  void onePeerSharesOneConnection() {
    try (PeerConnections c = connections(true)) {
      Connection a = connection(c, A).join();
      assertSame(a, connection(c, A).join());
      assertNotSame(a, connection(c, B).join());
      assertEquals(2, opened.size());
    }
  }

  @Test
  void aConnectionBeingOpenedIsShared() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> first = connection(c, A);
      CompletableFuture<Connection> second = connection(c, A);
      assertEquals(1, opened.size());
      pending.get(0).complete(new FakeConnection(A));
      assertSame(first.join(), second.join());
    }
  }

  @Test
  void aFailedOrClosedConnectionIsOpenedAgain() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> failed = connection(c, A);
      pending.get(0).completeExceptionally(new IOException("refused"));
      CompletionException e = assertThrows(CompletionException.class, failed::join);
      assertEquals("refused", e.getCause().getMessage());
      CompletableFuture<Connection> second = connection(c, A);
      assertEquals(2, opened.size());
      pending.get(1).complete(new FakeConnection(A));
      second.join().close();
      CompletableFuture<Connection> third = connection(c, A);
      assertEquals(3, opened.size());
      pending.get(2).complete(new FakeConnection(A));
      assertNotSame(second.join(), third.join());
      assertEquals(1, c.stats().open(), "the failed and the closed one no longer count");
    }
  }

  @Test
  void aDiscardedConnectionIsClosedAndReplaced() {
    try (PeerConnections c = connections(true)) {
      Connection a = connection(c, A).join();
      c.discard(A, a);
      assertFalse(a.isOpen(), "a discarded connection is closed");
      Connection again = connection(c, A).join();
      assertNotSame(a, again);
      assertTrue(again.isOpen());
      // Discarding a connection that was already replaced leaves the new one alone.
      c.discard(A, a);
      assertSame(again, connection(c, A).join());
      assertTrue(again.isOpen());
    }
  }

  @Test
  void closeClosesEveryConnectionIncludingThoseStillOpeningAndFailsWaitingUses() {
    PeerConnections c = connections(false, 1);
    CompletableFuture<Connection> a = connection(c, A);
    CompletableFuture<Connection> b = connection(c, B);
    assertEquals(1, opened.size(), "B waits: A's connection is being opened, in use");
    c.close();
    CompletionException e = assertThrows(CompletionException.class, b::join);
    assertInstanceOf(PeerClosedException.class, e.getCause());
    pending.get(0).complete(new FakeConnection(A));
    assertFalse(pending.get(0).join().isOpen(), "a connection that completes after close is closed");
    assertFalse(a.isCompletedExceptionally(), "the use that had it ran");
    assertInstanceOf(PeerClosedException.class,
        assertThrows(CompletionException.class, () -> connection(c, A).join()).getCause());
  }

  @Test
  void anExpectedPeersConnectionIsClosedForAnotherOnlyWhenEveryIdleOneIsExpected() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    NodeAddress d4 = new NodeAddress("10.0.0.4", 7004);
    try (PeerConnections c = connections(true, 2)) {
      Connection a = connection(c, A).join();
      Connection b = connection(c, B).join();
      PeerConnections.Expectation expectA = c.expect(A);
      assertTrue(c.connected(A) && c.connected(B));
      Connection third = connection(c, c3).join();
      assertTrue(a.isOpen(), "A is the least recently used, but expected");
      assertFalse(b.isOpen(), "B is closed for C");
      assertFalse(c.connected(B));
      PeerConnections.Expectation expectC = c.expect(c3);
      connection(c, d4).join();
      assertFalse(a.isOpen(), "every idle one expected: the least recently used goes");
      assertTrue(third.isOpen());
      PeerConnections.Expectation again = c.expect(c3); // C expected twice
      expectA.close();
      expectC.close();
      expectC.close(); // closing twice counts once: C is still expected
      connection(c, B).join();
      assertTrue(third.isOpen(), "C is still expected; D goes for B");
      again.close();
      assertEquals(3, c.stats().evictions());
    }
  }

  @Test
  void anExpectedPeersConnectionIsTheLastToDrain() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    try (PeerConnections c = connections(true, 2)) {
      CompletableFuture<Void> onA = new CompletableFuture<>();
      CompletableFuture<Void> onB = new CompletableFuture<>();
      Connection a = connection(c, A).join();
      Connection b = connection(c, B).join();
      c.use(A, x -> onA); // A is the least recently used of the two in use
      c.use(B, x -> onB);
      c.expect(A);
      CompletableFuture<Connection> waiting = connection(c, c3);
      assertFalse(waiting.isDone(), "both connections are in use");
      assertTrue(connection(c, A).isDone(), "A still takes new uses");
      assertFalse(connection(c, B).isDone(), "B drains for C");
      onB.complete(null);
      assertTrue(waiting.isDone(), "B was closed for C once its use ended");
      assertFalse(b.isOpen());
      assertTrue(a.isOpen());
    }
  }

  @Test
  void aBoundBelowOneIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> connections(true, 0));
  }
}
