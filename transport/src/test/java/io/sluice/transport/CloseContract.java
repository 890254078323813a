package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.DEADLINE;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.awaitAllDone;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.failureIfAny;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.patternMismatch;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/**
 * Closing a connection, the serving transport or the connecting transport fails everything still
 * outstanding with {@link PeerClosedException}, and later calls fail the same way at once.
 */
public interface CloseContract extends TransportContractFixture {
  int READ_LEN = 1 << 20;
  int READS = 16;

  /** Holds "hold" requests until the test lets go; answers anything else at once. */
  static MessageHandler holding(Queue<CompletableFuture<ByteBuffer>> held) {
    return (peer, request) -> {
      if (text(request).equals("hold")) {
        CompletableFuture<ByteBuffer> f = new CompletableFuture<>();
        held.add(f);
        return f;
      }
      return CompletableFuture.completedFuture(message("ok"));
    };
  }

  @Test
  default void closingAConnectionFailsItsOutstandingWork() throws Exception {
    Queue<CompletableFuture<ByteBuffer>> held = new ConcurrentLinkedQueue<>();
    Transport server = harness().open(holding(held));
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion src = server.allocate(8 * READ_LEN);
        RegisteredRegion dst = client.allocate(READS * READ_LEN)) {
      fillPattern(src, 4);
      Connection c = TransportHarness.connect(client, server);
      List<CompletableFuture<ByteBuffer>> requests = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        requests.add(c.request(message("hold")));
      }
      eventually("the handler holds 3 requests", DEADLINE, () -> held.size() == 3);
      List<CompletableFuture<Void>> reads = issueReads(c, src.descriptor(), dst);
      c.close();
      assertFalse(c.isOpen());
      for (CompletableFuture<ByteBuffer> f : requests) {
        assertFailsWith(PeerClosedException.class, f);
      }
      assertReadsCompletedOrPeerClosed(reads, dst);

      assertFailsWith(PeerClosedException.class, c.read(src.descriptor(), 0, dst, 0, 10));
      assertFailsWith(PeerClosedException.class, c.request(message("after close")));
      c.close(); // idempotent

      // The server still takes new connections.
      try (Connection again = TransportHarness.connect(client, server)) {
        assertEquals("ok", text(await(again.request(message("ping")))));
      }
      held.forEach(f -> f.complete(message("late")));
    }
  }

  @Test
  default void closingTheServingTransportFailsClientWork() throws Exception {
    Queue<CompletableFuture<ByteBuffer>> held = new ConcurrentLinkedQueue<>();
    Transport server = harness().open(holding(held));
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    RegisteredRegion src = server.allocate(8 * READ_LEN);
    try (RegisteredRegion dst = client.allocate(READS * READ_LEN);
        Connection c = TransportHarness.connect(client, server)) {
      fillPattern(src, 4);
      List<CompletableFuture<ByteBuffer>> requests = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        requests.add(c.request(message("hold")));
      }
      eventually("the handler holds 3 requests", DEADLINE, () -> held.size() == 3);
      List<CompletableFuture<Void>> reads = issueReads(c, src.descriptor(), dst);
      server.close();
      assertFalse(src.isOpen(), "closing the transport revokes its regions");
      for (CompletableFuture<ByteBuffer> f : requests) {
        assertFailsWith(PeerClosedException.class, f);
      }
      awaitAllDone(reads, DEADLINE);
      for (CompletableFuture<Void> f : reads) {
        // A READ racing with the owner's shutdown may also see its region revoked first.
        failureIfAny(f).ifPresent(e -> assertTrue(
            e instanceof PeerClosedException || e instanceof RegionRevokedException,
            "READ during server close: " + TransportTestSupport.describe(e)));
      }
      eventually("the client notices the server closed", DEADLINE, () -> !c.isOpen());
      assertFailsWith(PeerClosedException.class, c.request(message("anyone?")));
      assertFailsWith(PeerClosedException.class, c.read(src.descriptor(), 0, dst, 0, 10));
      // Freed when the last READ still being written from it lets go; the close waits for that
      // only so long.
      Eventually.reaches("live regions of the closed serving transport", 0, server::liveRegionCount);
    } finally {
      src.close(); // already revoked by the transport's close; must be harmless
    }
  }

  @Test
  default void closingTheConnectingTransportFailsItsConnections() throws Exception {
    Queue<CompletableFuture<ByteBuffer>> held = new ConcurrentLinkedQueue<>();
    Transport server = harness().open(holding(held));
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    Connection c = TransportHarness.connect(client, server);
    List<CompletableFuture<ByteBuffer>> requests = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      requests.add(c.request(message("hold")));
    }
    eventually("the handler holds 3 requests", DEADLINE, () -> held.size() == 3);
    client.close();
    for (CompletableFuture<ByteBuffer> f : requests) {
      assertFailsWith(PeerClosedException.class, f);
    }
    assertFalse(c.isOpen());
    assertFailsWith(PeerClosedException.class, c.request(message("after close")));
    c.close();
    held.forEach(f -> f.complete(message("late"))); // answers to a vanished peer are dropped

    Transport another = harness().open(MessageHandler.REJECT_ALL);
    try (Connection fresh = TransportHarness.connect(another, server)) {
      assertEquals("ok", text(await(fresh.request(message("ping")))));
    }
  }

  private static List<CompletableFuture<Void>> issueReads(Connection c, RemoteDescriptor d, RegisteredRegion dst) {
    List<CompletableFuture<Void>> reads = new ArrayList<>();
    for (int i = 0; i < READS; i++) {
      reads.add(c.read(d, (long) (i % 8) * READ_LEN, dst, (long) i * READ_LEN, READ_LEN));
    }
    return reads;
  }

  private static void assertReadsCompletedOrPeerClosed(List<CompletableFuture<Void>> reads, RegisteredRegion dst) {
    awaitAllDone(reads, DEADLINE);
    for (int i = 0; i < reads.size(); i++) {
      Optional<Throwable> failure = failureIfAny(reads.get(i));
      if (failure.isEmpty()) {
        patternMismatch(4, (long) (i % 8) * READ_LEN, dst, (long) i * READ_LEN, READ_LEN)
            .ifPresent(m -> {
              throw new AssertionError("READ completed with wrong bytes: " + m);
            });
      } else {
        assertTrue(failure.get() instanceof PeerClosedException,
            "outstanding READ at close: expected PeerClosedException, got "
                + TransportTestSupport.describe(failure.get()));
      }
    }
  }
}
