package io.sluice.spark.shuffle.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.ReadRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The executor's shared connections to its peers; no transport, no Spark. */
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
    return new PeerConnections(peer -> {
      CompletableFuture<Connection> f = new CompletableFuture<>();
      if (completeAtOnce) {
        f.complete(new FakeConnection(peer));
      } else {
        pending.add(f);
      }
      opened.add(f);
      return f;
    }, firstConnects::add);
  }

  @Test
  void connectingAheadIsBoundedSharedAndClosedWithTheRest() {
    NodeAddress c3 = new NodeAddress("10.0.0.3", 7003);
    PeerConnections c = connections(false);
    CompletableFuture<Connection> a = c.connection(A);
    assertEquals(1, c.connectAhead(List.of(A, B, B, c3), 1), "A is being opened already; one more at most");
    assertEquals(2, opened.size());
    assertEquals(1, c.connectAhead(List.of(A, B, c3), 5), "only c3 is left to open");
    assertEquals(3, opened.size());
    assertSame(a, c.connection(A));
    assertSame(opened.get(1), c.connection(B), "a task gets the connection opened ahead");
    pending.get(1).complete(new FakeConnection(B));
    c.close();
    assertFalse(pending.get(1).join().isOpen(), "closed with the others");
    FakeConnection late = new FakeConnection(c3);
    pending.get(2).complete(late);
    assertFalse(late.isOpen(), "one still being opened is closed when it completes");
  }

  @Test
  void onlyEachPeersFirstUsableConnectionIsTimed() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> a = c.connection(A);
      CompletableFuture<Connection> b = c.connection(B);
      assertEquals(List.of(), firstConnects, "nothing is usable yet");
      b.completeExceptionally(new IOException("refused"));
      assertEquals(List.of(), firstConnects, "a failed connection is not a first connection");
      a.complete(new FakeConnection(A));
      assertEquals(1, firstConnects.size());
      assertTrue(firstConnects.get(0) >= 0);
      // B's second try is its first usable connection; A's reconnection after a close is not timed.
      CompletableFuture<Connection> b2 = c.connection(B);
      b2.complete(new FakeConnection(B));
      a.join().close();
      c.connection(A).complete(new FakeConnection(A));
      assertEquals(2, firstConnects.size());
    }
  }

  @Test
  void onePeerSharesOneConnection() {
    try (PeerConnections c = connections(true)) {
      CompletableFuture<Connection> a = c.connection(A);
      assertSame(a, c.connection(A));
      assertNotSame(a, c.connection(B));
      assertEquals(2, opened.size());
    }
  }

  @Test
  void aConnectionBeingOpenedIsShared() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> a = c.connection(A);
      assertSame(a, c.connection(A));
      assertEquals(1, opened.size());
    }
  }

  @Test
  void aFailedOrClosedConnectionIsOpenedAgain() {
    try (PeerConnections c = connections(false)) {
      CompletableFuture<Connection> failed = c.connection(A);
      failed.completeExceptionally(new IOException("refused"));
      CompletableFuture<Connection> second = c.connection(A);
      assertNotSame(failed, second);
      second.complete(new FakeConnection(A));
      second.join().close();
      CompletableFuture<Connection> third = c.connection(A);
      assertNotSame(second, third);
      assertEquals(3, opened.size());
    }
  }

  @Test
  void aDiscardedConnectionIsClosedAndReplaced() {
    try (PeerConnections c = connections(true)) {
      CompletableFuture<Connection> a = c.connection(A);
      c.discard(A, a);
      assertFalse(a.join().isOpen(), "a discarded connection is closed");
      CompletableFuture<Connection> again = c.connection(A);
      assertNotSame(a, again);
      assertTrue(again.join().isOpen());
      // Discarding a connection that was already replaced leaves the new one alone.
      c.discard(A, a);
      assertSame(again, c.connection(A));
    }
  }

  @Test
  void closeClosesEveryConnectionIncludingThoseStillOpening() {
    PeerConnections c = connections(false);
    CompletableFuture<Connection> a = c.connection(A);
    CompletableFuture<Connection> b = c.connection(B);
    a.complete(new FakeConnection(A));
    c.close();
    assertFalse(a.join().isOpen());
    b.complete(new FakeConnection(B));
    assertFalse(b.join().isOpen(), "a connection that completes after close is closed");
  }
}
