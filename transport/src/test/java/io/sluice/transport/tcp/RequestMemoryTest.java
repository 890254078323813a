package io.sluice.transport.tcp;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The request bytes all peers together hold in a server (read, waiting for or in a handler) stay
 * within maxQueuedRequestBytes, whatever each peer's own share allows; the requests held back
 * are read and answered once memory returns.
 */
class RequestMemoryTest {
  private static final int REQUEST = 60_000;
  private static final int PEERS = 5;
  private static final int PER_PEER = 4;

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  private record Parked(int size, CompletableFuture<ByteBuffer> reply) {}

  @Test
  void requestsOfAllPeersTogetherStayWithinTheSharedBudget() throws Exception {
    AtomicLong held = new AtomicLong();
    AtomicLong most = new AtomicLong();
    ConcurrentLinkedQueue<Parked> parked = new ConcurrentLinkedQueue<>();
    MessageHandler holding = (peer, request) -> {
      int n = request.remaining();
      most.accumulateAndGet(held.addAndGet(n), Math::max);
      CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
      parked.add(new Parked(n, reply));
      return reply;
    };
    Transport server = harness.open(holding, Map.of(TransportOption.MAX_QUEUED_REQUEST_BYTES.key(),
        Integer.toString(3 * REQUEST + 1000), TransportOption.IO_TIMEOUT_MS.key(), "60000"));
    List<CompletableFuture<ByteBuffer>> answers = new ArrayList<>();
    for (int p = 0; p < PEERS; p++) {
      Connection c = TransportHarness.connect(harness.open(MessageHandler.REJECT_ALL), server);
      for (int i = 0; i < PER_PEER; i++) {
        answers.add(c.request(ByteBuffer.allocate(REQUEST)));
      }
    }
    Eventually.holds("three requests reach the handler", () -> held.get() >= 3L * REQUEST);
    Thread.sleep(300); // time for more to arrive, were they let in: what must not happen has no signal
    assertEquals(3L * REQUEST, held.get(), "requests beyond the shared budget were read");
    // Answer what is parked, again and again, until every request has been through the handler.
    Eventually.reaches("requests still waiting for an answer", 0L, () -> {
      for (Parked p; (p = parked.poll()) != null; ) {
        held.addAndGet(-p.size());
        p.reply().complete(ByteBuffer.allocate(4).putInt(0, p.size()));
      }
      return answers.stream().filter(a -> !a.isDone()).count();
    });
    for (CompletableFuture<ByteBuffer> a : answers) {
      assertEquals(REQUEST, await(a).getInt(0));
    }
    assertTrue(most.get() <= 3L * REQUEST + 1000, "at most " + most.get() + " bytes were held at once");
  }
}
