package io.sluice.transport.verbs;

import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.awaitAllDone;
import static io.sluice.transport.TransportTestSupport.failureIfAny;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportTestSupport;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What only verbs must do beyond the contract: a READ of a revoked region kills the queue pair
 * and with it every READ in flight on it; READs of live regions caught in that must be retried on
 * a new queue pair and succeed with the right bytes. Set-up traffic never reaches the
 * application's handler. Needs an active RDMA device (the SoftRoCE lab).
 */
@Timeout(120)
class VerbsRecoveryTest {
  private static final int READ_LEN = 256 * 1024;
  private static final int READS = 48;

  private TransportHarness harness;

  @BeforeEach
  void open() {
    VerbsTransportProvider p = new VerbsTransportProvider();
    assumeTrue(p.isAvailable(), () -> "verbs unavailable: " + p.unavailabilityCause().map(Throwable::getMessage).orElse(""));
    harness = new TransportHarness("verbs", VerbsTransportContractTest.labOptions());
  }

  @AfterEach
  void close() {
    if (harness != null) {
      harness.close();
    }
  }

  @Test
  void readsOfLiveRegionsSurviveTheQueuePairThatARevokedReadKilled() throws Exception {
    AtomicInteger handlerCalls = new AtomicInteger();
    Transport server = harness.open((peer, request) -> {
      handlerCalls.incrementAndGet();
      return CompletableFuture.completedFuture(TransportTestSupport.message("pong"));
    });
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion live = server.allocate(READS * READ_LEN);
        RegisteredRegion dst = client.allocate(READS * READ_LEN + 4096);
        Connection c = TransportHarness.connect(client, server)) {
      assertEquals("verbs", c.dataPath());
      fillPattern(live, 31);
      await(c.read(live.descriptor(), 0, dst, 0, 1));
      // Each round the device itself refuses a READ, since the client still believes the key live.
      for (int round = 0; round < 3; round++) {
        RegisteredRegion doomed = server.allocate(4096);
        RemoteDescriptor gone = doomed.descriptor();
        await(c.read(gone, 0, dst, (long) READS * READ_LEN, 4096));
        doomed.close();
        List<ReadRequest> batch = new ArrayList<>();
        for (int i = 0; i < READS; i++) {
          if (i == READS / 3) {
            batch.add(new ReadRequest(gone, 0, dst, (long) READS * READ_LEN, 4096));
          }
          batch.add(new ReadRequest(live.descriptor(), (long) i * READ_LEN, dst, (long) i * READ_LEN, READ_LEN));
        }
        List<CompletableFuture<Void>> futures = c.readBatch(batch);
        awaitAllDone(futures, TransportTestSupport.DEADLINE);
        for (int i = 0; i < futures.size(); i++) {
          Optional<Throwable> failure = failureIfAny(futures.get(i));
          if (batch.get(i).remote().equals(gone)) {
            assertTrue(failure.isPresent(), "READ of the revoked region succeeded");
            assertInstanceOf(RegionRevokedException.class, failure.get());
          } else {
            int index = i;
            assertTrue(failure.isEmpty(), () -> "READ " + index + " of a live region failed: " + failure.get());
          }
        }
        assertPattern(31, 0, dst, 0, READS * READ_LEN);
      }
      assertTrue(c.isOpen());
      assertEquals("pong", TransportTestSupport.text(await(c.request(TransportTestSupport.message("ping")))));
      assertEquals(1, handlerCalls.get(), "set-up traffic reached the message handler");
    }
  }

  /**
   * Requests ride their own queue pair (SEND/RECV, large ones staged and READ): requests held
   * by the handler while the device kills the READ queue pair still get their answers, small
   * and large, in both directions.
   */
  @Test
  void requestsOutliveTheReadQueuePairAndLargeOnesAreStaged() throws Exception {
    CompletableFuture<Void> release = new CompletableFuture<>();
    AtomicInteger entered = new AtomicInteger();
    Transport server = harness.open((peer, request) -> {
      entered.incrementAndGet();
      int size = request.getInt(0);
      ByteBuffer answer = ByteBuffer.allocate(size);
      for (int i = 0; i < size; i++) {
        answer.put(i, (byte) (i * 13 + request.remaining()));
      }
      return release.thenApply(x -> answer);
    });
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    // One frame holds 4088 message bytes; the harness allows messages up to 64 KiB.
    int[] responseSizes = {1, 4000, 5000, TransportTestSupport.MAX_MESSAGE_BYTES};
    int[] requestSizes = {4, 4088, 4089, TransportTestSupport.MAX_MESSAGE_BYTES};
    try (RegisteredRegion dst = client.allocate(8192);
        Connection c = TransportHarness.connect(client, server)) {
      List<CompletableFuture<ByteBuffer>> answers = new ArrayList<>();
      for (int i = 0; i < responseSizes.length; i++) {
        ByteBuffer request = ByteBuffer.allocate(requestSizes[i]).putInt(0, responseSizes[i]);
        answers.add(c.request(request));
      }
      TransportTestSupport.eventually("the handler holds every request", TransportTestSupport.DEADLINE,
          () -> entered.get() == responseSizes.length || answers.stream().anyMatch(CompletableFuture::isDone));
      for (CompletableFuture<ByteBuffer> f : answers) {
        assertTrue(!f.isDone(), () -> "a held request completed early: " + failureIfAny(f));
      }
      RegisteredRegion doomed = server.allocate(4096);
      RemoteDescriptor gone = doomed.descriptor();
      await(c.read(gone, 0, dst, 0, 4096));
      doomed.close();
      CompletableFuture<Void> refused = c.read(gone, 0, dst, 0, 4096);
      assertInstanceOf(RegionRevokedException.class, TransportTestSupport.failureOf(refused));
      release.complete(null);
      for (int i = 0; i < responseSizes.length; i++) {
        ByteBuffer answer = await(answers.get(i));
        assertEquals(responseSizes[i], answer.remaining());
        for (int k = 0; k < responseSizes[i]; k++) {
          if (answer.get(answer.position() + k) != (byte) (k * 13 + requestSizes[i])) {
            throw new AssertionError("answer " + i + " differs at byte " + k);
          }
        }
      }
    }
  }

  /**
   * More connections than one completion queue has entries for: the node opens another queue
   * instead of letting one overflow, and every connection still READs and answers.
   */
  @Test
  void connectionsBeyondOneCompletionQueueAllWork() throws Exception {
    Transport server = harness.open((peer, request) -> CompletableFuture.completedFuture(request));
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    int connections = 48; // about 200 completion entries each side per connection; a queue holds 8192
    List<Connection> open = new ArrayList<>();
    try (RegisteredRegion src = server.allocate(4096);
        RegisteredRegion dst = client.allocate(4096 * connections)) {
      fillPattern(src, 5);
      for (int i = 0; i < connections; i++) {
        open.add(TransportHarness.connect(client, server));
      }
      for (int i = 0; i < connections; i++) {
        Connection c = open.get(i);
        await(c.read(src.descriptor(), 0, dst, 4096L * i, 4096));
        ByteBuffer echo = await(c.request(TransportTestSupport.message("connection " + i)));
        assertEquals("connection " + i, TransportTestSupport.text(echo));
      }
      for (int i = 0; i < connections; i++) {
        assertPattern(5, 0, dst, 4096L * i, 4096);
      }
    } finally {
      open.forEach(Connection::close);
    }
  }
}
