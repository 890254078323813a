package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.wire.FrameType;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A peer whose request waits for the request memory all peers share (maxQueuedRequestBytes),
 * held by another peer's requests, is not the one at fault: however long it waits, the server
 * does not close it as stalled, and it is served once the memory frees. A peer that stops in the
 * middle of a frame still is closed as stalled.
 */
class WaitingForRequestMemoryTest {
  private static final int REQUEST = 60_000;
  /** The server's stall deadline, short so that the waiting peer waits well past it. */
  private static final String SERVER_IO_TIMEOUT_MS = "100";
  /** The clients' own deadlines for their requests: far beyond the test's. */
  private static final Map<String, String> PATIENT = Map.of(TransportOption.IO_TIMEOUT_MS.key(), "120000");
  /** The first byte of a request its handler holds until the test lets go. */
  private static final byte HOLD = 1;

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  private static ByteBuffer request(int size, byte first) {
    ByteBuffer m = ByteBuffer.allocate(size);
    m.put(0, first);
    return m;
  }

  @Test
  void aPeerWaitingForSharedRequestMemoryOutlivesTheStallDeadlineAndIsServedWhenItFrees() throws Exception {
    ConcurrentLinkedQueue<CompletableFuture<ByteBuffer>> held = new ConcurrentLinkedQueue<>();
    MessageHandler handler = (peer, request) -> {
      int size = request.remaining();
      if (request.get(request.position()) == HOLD) {
        CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
        held.add(reply);
        return reply;
      }
      return CompletableFuture.completedFuture(ByteBuffer.allocate(4).putInt(0, size));
    };
    Transport server = harness.open(handler, Map.of(
        TransportOption.MAX_QUEUED_REQUEST_BYTES.key(), Integer.toString(3 * REQUEST + 1000),
        TransportOption.IO_TIMEOUT_MS.key(), SERVER_IO_TIMEOUT_MS));

    // One peer's requests take all but 1000 bytes of the shared memory, and its handler is slow.
    Connection holder = TransportHarness.connect(harness.open(MessageHandler.REJECT_ALL, PATIENT), server);
    List<CompletableFuture<ByteBuffer>> holding = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      holding.add(holder.request(request(REQUEST, HOLD)));
    }
    Eventually.reaches("requests the handler holds", 3, held::size);

    // Another peer's request does not fit: the server stops reading it, to wait for memory.
    Connection waiter = TransportHarness.connect(harness.open(MessageHandler.REJECT_ALL, PATIENT), server);
    CompletableFuture<ByteBuffer> waiting = waiter.request(request(REQUEST, (byte) 0));

    // A third peer stops half way through a frame (a relay passes half of its CONTROL frame on).
    // The server closes it past the stall deadline; the waiting peer, which started waiting
    // before, has been waiting longer than that by then, and the timer has looked at it too.
    Transport third = harness.open(MessageHandler.REJECT_ALL, PATIENT);
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) ->
        d == TamperingRelay.Direction.TO_SERVER && h.type() == FrameType.CONTROL
            ? List.of(Arrays.copyOf(f, f.length / 2)) : List.of(f))) {
      CarrierConnection stalling = (CarrierConnection) await(third.connect(relay.address()));
      stalling.control(99, ByteBuffer.allocate(1000));
      Eventually.holds("the server closes the peer that stopped mid-frame", () -> !stalling.isOpen());
    }
    assertFalse(waiting.isDone(), "the waiting request ended before memory freed: " + waiting);

    // The slow handler answers: the memory returns, and the waiting request is read and answered.
    for (CompletableFuture<ByteBuffer> reply; (reply = held.poll()) != null; ) {
      reply.complete(ByteBuffer.allocate(4).putInt(0, REQUEST));
    }
    assertEquals(REQUEST, await(waiting).getInt(0));
    for (CompletableFuture<ByteBuffer> reply : holding) {
      assertEquals(REQUEST, await(reply).getInt(0));
    }
    assertEquals(10, await(waiter.request(request(10, (byte) 0))).getInt(0), "the waiting peer's connection goes on");
  }
}
