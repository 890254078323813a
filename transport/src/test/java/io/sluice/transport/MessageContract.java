package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.DEADLINE;
import static io.sluice.transport.TransportTestSupport.MAX_MESSAGE_BYTES;
import static io.sluice.transport.TransportTestSupport.assertBytes;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.awaitAllDone;
import static io.sluice.transport.TransportTestSupport.bytes;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.failureIfAny;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.options;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Two-sided request/response messages: echo, size bounds, handler failures, flow control, timeouts. */
public interface MessageContract extends TransportContractFixture {

  /** Answers with the 8-byte node id the handler was told, then the request bytes. */
  static MessageHandler echoWithPeer() {
    return (peer, request) -> {
      ByteBuffer out = ByteBuffer.allocate(8 + request.remaining());
      out.putLong(peer).put(request).flip();
      return CompletableFuture.completedFuture(out);
    };
  }

  /** Answers a 4-byte big-endian size with a response of that many patterned bytes. */
  static MessageHandler sizedResponses() {
    return (peer, request) -> {
      int n = request.getInt();
      byte[] b = new byte[n];
      for (int i = 0; i < n; i++) {
        b[i] = TransportTestSupport.patternByte(n, i);
      }
      return CompletableFuture.completedFuture(ByteBuffer.wrap(b));
    };
  }

  @Test
  default void requestResponseEcho() throws Exception {
    Transport server = harness().open(echoWithPeer());
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      Random random = new Random(21);
      for (int size : new int[] {0, 1, 100, 4096, 50_000}) {
        byte[] payload = TransportTestSupport.randomBytes(random, size);
        ByteBuffer request = ByteBuffer.wrap(payload.clone());
        CompletableFuture<ByteBuffer> f = c.request(request);
        request.clear().put(new byte[size]); // the transport copied the request before returning
        ByteBuffer response = await(f);
        assertEquals(8 + size, response.remaining());
        assertEquals(client.nodeId(), response.getLong(), "handler must be told the requesting node");
        assertBytes(payload, response);
      }
    }
  }

  @Test
  default void theHandlerIsToldTheAddressThePeerConnectsFrom() throws Exception {
    MessageHandler where = new MessageHandler() {
      @Override
      public CompletableFuture<ByteBuffer> handle(long peer, ByteBuffer request) {
        return CompletableFuture.failedFuture(new AssertionError("the transport did not say where the peer is"));
      }

      @Override
      public CompletableFuture<ByteBuffer> handle(long peer, java.net.InetAddress address, ByteBuffer request) {
        return CompletableFuture.completedFuture(ByteBuffer.wrap(address.getAddress()));
      }
    };
    Transport server = harness().open(where);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    java.net.InetAddress serverHost = java.net.InetAddress.getByName(server.localAddress().host());
    org.junit.jupiter.api.Assumptions.assumeTrue(serverHost.isLoopbackAddress(), "the server listens on loopback");
    try (Connection c = TransportHarness.connect(client, server)) {
      ByteBuffer answer = await(c.request(ByteBuffer.allocate(0)));
      byte[] raw = new byte[answer.remaining()];
      answer.get(raw);
      java.net.InetAddress seen = java.net.InetAddress.getByAddress(raw);
      assertTrue(seen.isLoopbackAddress(), "a peer on loopback was said to come from " + seen);
    }
  }

  @Test
  default void onlyTheRemainingBytesTravel() throws Exception {
    byte[] backing = "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    MessageHandler sliced = (peer, request) -> {
      String got = text(request);
      ByteBuffer reply;
      if (got.equals("direct")) {
        reply = ByteBuffer.allocateDirect(16).put(backing).position(10).asReadOnlyBuffer();
      } else {
        reply = ByteBuffer.wrap(backing, 3, 5); // position 3, limit 8
      }
      return CompletableFuture.completedFuture(reply);
    };
    Transport server = harness().open(sliced);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      ByteBuffer request = ByteBuffer.wrap("xxheapyy".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 2, 4);
      assertEquals("34567", text(await(c.request(request))));
      assertEquals(2, request.position(), "request() must not move the caller's buffer");
      assertEquals("abcdef", text(await(c.request(message("direct")))));
    }
  }

  @Test
  default void handlerReturningNullFailsOnlyThatRequest() throws Exception {
    MessageHandler sometimesNull = (peer, request) ->
        text(request).equals("null") ? null : CompletableFuture.completedFuture(message("ok"));
    Transport server = harness().open(sometimesNull);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      assertFailsWith(RemoteHandlerException.class, c.request(message("null")));
      assertEquals("ok", text(await(c.request(message("fine")))));
    }
  }

  @Test
  default void readsAreServedWhileEveryHandlerThreadIsBusy() throws Exception {
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
    MessageHandler blocking = (peer, request) -> {
      entered.countDown();
      try {
        // Deliberately holds the only handler thread.
        release.await(DEADLINE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return CompletableFuture.completedFuture(message("released"));
    };
    Transport server = harness().open(blocking, options(TransportOption.HANDLER_THREADS, 1));
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion src = server.allocate(1 << 20);
        RegisteredRegion dst = client.allocate(1 << 20);
        Connection c = TransportHarness.connect(client, server)) {
      TransportTestSupport.fillPattern(src, 3);
      CompletableFuture<ByteBuffer> stuck = c.request(message("block"));
      assertTrue(entered.await(DEADLINE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
      await(c.read(src.descriptor(), 0, dst, 0, 1 << 20));
      TransportTestSupport.assertPattern(3, 0, dst, 0, 1 << 20);
      release.countDown();
      assertEquals("released", text(await(stuck)));
    } finally {
      release.countDown();
    }
  }

  @Test
  default void concurrentRequestsGetTheirOwnResponses() throws Exception {
    Transport server = harness().open(echoWithPeer());
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      Queue<String> problems = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<ByteBuffer>> all = new java.util.concurrent.CopyOnWriteArrayList<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int id = t;
        Thread w = new Thread(() -> {
          for (int i = 0; i < 100; i++) {
            String body = "thread " + id + " request " + i + " " + "x".repeat(i * 37);
            all.add(c.request(message(body)).whenComplete((r, e) -> {
              if (e != null) {
                problems.add(body.substring(0, 20) + " failed: " + e);
              } else {
                ByteBuffer copy = r.duplicate();
                copy.getLong();
                if (!text(copy).equals(body)) {
                  problems.add("response mismatch for " + body.substring(0, 20));
                }
              }
            }));
          }
        });
        threads.add(w);
        w.start();
      }
      for (Thread w : threads) {
        w.join(DEADLINE.toMillis());
      }
      assertEquals(400, all.size());
      awaitAllDone(all, DEADLINE);
      assertTrue(problems.isEmpty(), () -> problems.size() + " problems, first: " + problems.peek());
    }
  }

  @Test
  default void messageSizeBoundIsExactAtTheSender() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    MessageHandler countingSink = (peer, request) -> {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture(ByteBuffer.allocate(4).putInt(0, request.remaining()));
    };
    Transport server = harness().open(countingSink);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      ByteBuffer atLimit = ByteBuffer.wrap(TransportTestSupport.randomBytes(new Random(2), MAX_MESSAGE_BYTES));
      assertEquals(MAX_MESSAGE_BYTES, await(c.request(atLimit)).getInt(0));
      assertEquals(1, calls.get());

      ByteBuffer over = ByteBuffer.allocate(MAX_MESSAGE_BYTES + 1);
      assertFailsWith(MessageTooLargeException.class, c.request(over));
      ByteBuffer wayOver = ByteBuffer.allocateDirect(4 * MAX_MESSAGE_BYTES);
      assertFailsWith(MessageTooLargeException.class, c.request(wayOver));
      assertEquals(1, calls.get(), "an oversized request reached the handler");

      assertTrue(c.isOpen(), "a refused oversized request must not close the connection");
      assertEquals(5, await(c.request(ByteBuffer.allocate(5))).getInt(0));
    }
  }

  @Test
  default void responseSizeBoundIsEnforced() throws Exception {
    Transport server = harness().open(sizedResponses());
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      ByteBuffer atLimit = await(c.request(ByteBuffer.allocate(4).putInt(0, MAX_MESSAGE_BYTES)));
      assertEquals(MAX_MESSAGE_BYTES, atLimit.remaining());
      byte[] got = bytes(atLimit);
      for (int i = 0; i < got.length; i++) {
        if (got[i] != TransportTestSupport.patternByte(MAX_MESSAGE_BYTES, i)) {
          throw new AssertionError("response byte " + i + " differs");
        }
      }
      assertFailsWith(MessageTooLargeException.class,
          c.request(ByteBuffer.allocate(4).putInt(0, MAX_MESSAGE_BYTES + 1)));
      assertTrue(c.isOpen(), "an oversized response must not close the connection");
      assertEquals(3, await(c.request(ByteBuffer.allocate(4).putInt(0, 3))).remaining());
    }
  }

  @Test
  default void handlerFailureReachesTheSender() throws Exception {
    MessageHandler failing = (peer, request) -> {
      String what = text(request);
      switch (what) {
        case "fail":
          return CompletableFuture.failedFuture(new IllegalStateException("disk on fire"));
        case "throw":
          throw new IllegalArgumentException("handler threw before answering");
        default:
          return CompletableFuture.completedFuture(message("fine"));
      }
    };
    Transport server = harness().open(failing);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      RemoteHandlerException e = assertFailsWith(RemoteHandlerException.class, c.request(message("fail")));
      assertTrue(String.valueOf(e.getMessage()).contains("disk on fire"),
          "the error should carry the handler's message: " + e.getMessage());
      RemoteHandlerException thrown = assertFailsWith(RemoteHandlerException.class, c.request(message("throw")));
      assertTrue(String.valueOf(thrown.getMessage()).contains("handler threw before answering"),
          "the error should carry the handler's message: " + thrown.getMessage());
      assertEquals("fine", text(await(c.request(message("other")))));
    }
  }

  /**
   * A handler's refusal for load (its future failed with a {@link ResourceExhaustedException})
   * reaches the sender as that class, with the handler's message; every other failure of the
   * handler, one whose text reads like a refusal or another transport failure of its own, as a
   * {@link RemoteHandlerException}.
   */
  @Test
  default void aHandlerRefusalForLoadReachesTheSenderAsItsClass() throws Exception {
    MessageHandler refusing = (peer, request) -> {
      switch (text(request)) {
        case "busy":
          return CompletableFuture.failedFuture(new ResourceExhaustedException("this peer holds 3 streams"));
        case "reads like busy":
          return CompletableFuture.failedFuture(new IllegalStateException("RESOURCE_EXHAUSTED: already holds 3"));
        case "unknown key":
          return CompletableFuture.failedFuture(new UnknownKeyException("a key of the handler's own"));
        default:
          return CompletableFuture.completedFuture(message("fine"));
      }
    };
    Transport server = harness().open(refusing);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      ResourceExhaustedException busy = assertFailsWith(ResourceExhaustedException.class, c.request(message("busy")));
      assertEquals("peer: this peer holds 3 streams", busy.getMessage());
      RemoteHandlerException text = assertFailsWith(RemoteHandlerException.class, c.request(message("reads like busy")));
      assertTrue(text.getMessage().contains("RESOURCE_EXHAUSTED: already holds 3"), text.getMessage());
      assertFailsWith(RemoteHandlerException.class, c.request(message("unknown key")));
      assertEquals("fine", text(await(c.request(message("other")))));
    }
  }

  @Test
  default void rejectAllHandlerFailsRequests() throws Exception {
    Transport server = harness().open(MessageHandler.REJECT_ALL);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (Connection c = TransportHarness.connect(client, server)) {
      assertFailsWith(RemoteHandlerException.class, c.request(message("anyone?")));
    }
  }

  @Test
  default void flowControlMakesExtraRequestsWaitAtTheSender() throws Exception {
    int limit = 3;
    int sent = 20;
    Queue<CompletableFuture<ByteBuffer>> held = new ConcurrentLinkedQueue<>();
    AtomicInteger outstanding = new AtomicInteger();
    AtomicInteger maxOutstanding = new AtomicInteger();
    AtomicLong received = new AtomicLong();
    MessageHandler holding = (peer, request) -> {
      String body = text(request);
      received.incrementAndGet();
      maxOutstanding.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
      CompletableFuture<ByteBuffer> answer = new CompletableFuture<>();
      held.add(answer);
      return answer.thenApply(ignored -> {
        outstanding.decrementAndGet();
        return message("done:" + body);
      });
    };
    var config = options(TransportOption.MAX_REQUESTS_IN_FLIGHT, limit);
    Transport server = harness().open(holding, config);
    Transport client = harness().open(MessageHandler.REJECT_ALL, config);
    try (Connection c = TransportHarness.connect(client, server)) {
      List<CompletableFuture<ByteBuffer>> futures = new ArrayList<>();
      for (int i = 0; i < sent; i++) {
        futures.add(c.request(message("r" + i)));
      }
      eventually("the handler holds " + limit + " requests", DEADLINE, () -> received.get() >= limit);
      TransportTestSupport.sleep(300); // give a broken sender the chance to push more
      assertEquals(limit, received.get(), "requests beyond maxRequestsInFlight reached the peer");
      for (CompletableFuture<ByteBuffer> f : futures) {
        assertTrue(!f.isDone() || failureIfAny(f).isEmpty(),
            () -> "a waiting request failed instead of waiting: " + failureIfAny(f));
      }
      // Answer the held requests as they arrive until every one has been answered. Counting the
      // answers, not the arrivals: the handler counts a request before it holds it, so the last
      // arrival may be counted while its answer is not yet there to release.
      AtomicInteger answered = new AtomicInteger();
      Eventually.reaches("requests answered (" + limit + " at a time)", sent, () -> {
        Optional<CompletableFuture<ByteBuffer>> failed =
            futures.stream().filter(CompletableFuture::isCompletedExceptionally).findFirst();
        if (failed.isPresent()) {
          throw new AssertionError("a request failed while the sender waited for credit: "
              + TransportTestSupport.describe(TransportTestSupport.failureOf(failed.get())));
        }
        for (CompletableFuture<ByteBuffer> next; (next = held.poll()) != null; ) {
          next.complete(ByteBuffer.allocate(0));
          answered.incrementAndGet();
        }
        return answered.get();
      });
      for (int i = 0; i < sent; i++) {
        assertEquals("done:r" + i, text(await(futures.get(i))));
      }
      assertTrue(maxOutstanding.get() <= limit,
          "the handler saw " + maxOutstanding.get() + " requests at once, limit " + limit);
    }
  }

  @Test
  default void pipelinedRequestsAtTheCreditLimitAllSucceed() throws Exception {
    // Answers come from another thread, so the peer may see the next request before the thread
    // that answered the last one has finished: the credit must already be back by then.
    java.util.concurrent.ExecutorService answering = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      MessageHandler later = (peer, request) -> {
        String body = text(request);
        return CompletableFuture.supplyAsync(() -> message("re:" + body), answering);
      };
      var config = options(TransportOption.MAX_REQUESTS_IN_FLIGHT, 1);
      Transport server = harness().open(later, config);
      Transport client = harness().open(MessageHandler.REJECT_ALL, config);
      try (Connection c = TransportHarness.connect(client, server)) {
        List<CompletableFuture<ByteBuffer>> futures = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
          futures.add(c.request(message("n" + i)));
        }
        awaitAllDone(futures, DEADLINE);
        for (int i = 0; i < futures.size(); i++) {
          Optional<Throwable> failure = failureIfAny(futures.get(i));
          int n = i;
          assertTrue(failure.isEmpty(), () -> "request " + n + " of 300 at maxRequestsInFlight=1 failed: "
              + TransportTestSupport.describe(failure.get()));
          assertEquals("re:n" + i, text(futures.get(i).join()));
        }
      }
    } finally {
      answering.shutdownNow();
    }
  }

  @Test
  default void unansweredRequestTimesOut() throws Exception {
    Queue<CompletableFuture<ByteBuffer>> never = new ConcurrentLinkedQueue<>();
    MessageHandler silentOnQuestions = (peer, request) -> {
      if (text(request).startsWith("?")) {
        CompletableFuture<ByteBuffer> f = new CompletableFuture<>();
        never.add(f);
        return f;
      }
      return CompletableFuture.completedFuture(message("answer"));
    };
    // The question waits out the whole deadline; the requests that are answered must never come
    // near it, on a loaded machine or in the lab's emulated guest.
    var config = options(TransportOption.IO_TIMEOUT_MS, 2000, TransportOption.MAX_REQUESTS_IN_FLIGHT, 2);
    Transport server = harness().open(silentOnQuestions, config);
    Transport client = harness().open(MessageHandler.REJECT_ALL, config);
    try (Connection c = TransportHarness.connect(client, server)) {
      assertFailsWith(TransportTimeoutException.class, c.request(message("?a")));
      // A timeout is not a connection failure: other requests still get through.
      assertTrue(c.isOpen());
      assertEquals("answer", text(await(c.request(message("plain")))));
      // Late answers are dropped quietly, and the connection stays usable afterwards.
      eventually("the handler saw the question", DEADLINE, () -> never.size() == 1);
      never.forEach(f -> f.complete(message("too late")));
      for (int i = 0; i < 4; i++) {
        assertEquals("answer", text(await(c.request(message("plain again")))));
      }
    }
  }
}
