package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The spin-then-sleep completion poller against a completion queue made in memory: every
 * completion reaches the handler once whether it comes while the thread spins or sleeps,
 * close stops a spinning or a sleeping thread and hands over what was still queued, and a
 * waiting caller can drain the queue on its own thread.
 */
class CompletionPollerTest {

  private static final long DEADLINE_SECONDS = 20;

  /** A queue in memory that raises an event for its next completion once armed. */
  private static final class MemoryCompletions implements CompletionSource {
    private final ArrayDeque<Long> queued = new ArrayDeque<>();
    private boolean armed;
    private boolean eventRaised;
    final AtomicInteger sleeps = new AtomicInteger();
    /** Whether the poller's thread waits in {@link #await} right now. */
    volatile boolean sleeping;
    volatile boolean closed;

    synchronized void add(long wrId) {
      queued.add(wrId);
      if (armed) {
        armed = false;
        eventRaised = true;
        notifyAll();
      }
    }

    /** Queues a completion without raising an event (as if the queue were not armed). */
    synchronized void addQuietly(long wrId) {
      queued.add(wrId);
    }

    @Override
    public int poll(CompletionPoller.Handler handler) {
      Long id;
      synchronized (this) {
        id = queued.poll();
      }
      if (id == null) {
        return 0;
      }
      handler.completed(id, CompletionStatus.SUCCESS, 0);
      return 1;
    }

    @Override
    public int batch() {
      return 1;
    }

    @Override
    public synchronized void arm() {
      armed = true;
    }

    @Override
    public synchronized boolean await(int millis) throws java.io.IOException {
      sleeps.incrementAndGet();
      sleeping = true;
      try {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!eventRaised) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          try {
            TimeUnit.NANOSECONDS.timedWait(this, left);
          } catch (InterruptedException e) {
            throw new java.io.InterruptedIOException();
          }
        }
        eventRaised = false;
        return true;
      } finally {
        sleeping = false;
      }
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  private static void closeWithin(CompletionPoller poller) throws InterruptedException {
    Thread closer = new Thread(poller::close);
    closer.start();
    closer.join(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS));
    assertFalse(closer.isAlive(), "close did not return");
  }

  @Test
  void everyCompletionArrivesOnceWhetherTheThreadSpinsOrSleeps() throws Exception {
    for (long spinNanos : new long[] {0, TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.MILLISECONDS.toNanos(5)}) {
      MemoryCompletions source = new MemoryCompletions();
      int count = 300;
      Set<Long> seen = ConcurrentHashMap.newKeySet();
      AtomicInteger duplicates = new AtomicInteger();
      CountDownLatch all = new CountDownLatch(count);
      CompletionPoller poller = new CompletionPoller(source, 64, spinNanos, (wrId, status, len) -> {
        if (seen.add(wrId)) {
          all.countDown();
        } else {
          duplicates.incrementAndGet();
        }
      }, "test-cq");
      try {
        for (int i = 0; i < count; i++) {
          source.add(i);
          if (i % 50 == 0) {
            Thread.sleep(12); // long enough for the thread to stop spinning and sleep
          } else if (i % 7 == 0) {
            Thread.sleep(0, 200_000);
          }
        }
        assertTrue(all.await(DEADLINE_SECONDS, TimeUnit.SECONDS), "completions lost with spin " + spinNanos
            + " ns: " + all.getCount() + " of " + count + " missing");
        assertEquals(0, duplicates.get());
      } finally {
        closeWithin(poller);
      }
      assertTrue(source.closed);
    }
  }

  @Test
  void closeStopsASpinningThreadAndHandsOverWhatWasQueued() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    AtomicInteger handled = new AtomicInteger();
    // Spins for up to a second between completions: close must not wait for the spin to end.
    CompletionPoller poller = new CompletionPoller(source, 64, TimeUnit.SECONDS.toNanos(1),
        (wrId, status, len) -> handled.incrementAndGet(), "test-cq");
    source.add(1);
    source.addQuietly(2);
    closeWithin(poller);
    assertEquals(2, handled.get(), "a completion queued before close was lost");
    assertTrue(source.closed);
    assertEquals(0, poller.tryDrain(), "a closed poller still polls its queue");
  }

  @Test
  void closeStopsASleepingThread() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    CompletionPoller poller = new CompletionPoller(source, 64, 0, (wrId, status, len) -> { }, "test-cq");
    Eventually.holds("the thread sleeps", () -> source.sleeps.get() > 0);
    closeWithin(poller);
    assertTrue(source.closed);
  }

  @Test
  void aWaitingCallerDrainsTheQueueOnItsOwnThread() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    AtomicReference<Thread> handledOn = new AtomicReference<>();
    CompletionPoller poller = new CompletionPoller(source, 64, 0, (wrId, status, len) -> handledOn.set(
        Thread.currentThread()), "test-cq");
    try {
      Eventually.holds("the thread sleeps", () -> source.sleeps.get() > 0);
      // No event is raised: the poller thread sleeps on (it may still find one when its wait
      // slice ends, so try until the caller got one).
      AtomicLong id = new AtomicLong();
      Eventually.holds("the caller handles a completion itself", () -> {
        source.addQuietly(id.getAndIncrement());
        try {
          return poller.tryDrain() == 1 && handledOn.get() == Thread.currentThread();
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
    } finally {
      closeWithin(poller);
    }
  }

  @Test
  void aCallbackThatWaitsDoesNotPollUnderItsOwnBatch() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    AtomicReference<CompletionPoller> self = new AtomicReference<>();
    AtomicInteger nested = new AtomicInteger(-1);
    CountDownLatch handled = new CountDownLatch(1);
    CompletionPoller poller = new CompletionPoller(source, 64, 0, (wrId, status, len) -> {
      try {
        nested.set(self.get().tryDrain());
      } catch (java.io.IOException e) {
        nested.set(-2);
      }
      handled.countDown();
    }, "test-cq");
    self.set(poller);
    try {
      source.add(1);
      source.addQuietly(2);
      assertTrue(handled.await(DEADLINE_SECONDS, TimeUnit.SECONDS));
      assertEquals(0, nested.get(), "a callback drained the queue under the batch it was called from");
    } finally {
      closeWithin(poller);
    }
  }

  @Test
  void aHandlerThatThrowsDoesNotStopTheThread() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    CountDownLatch later = new CountDownLatch(2);
    CompletionPoller poller = new CompletionPoller(source, 64, 0, (wrId, status, len) -> {
      if (wrId == 1) {
        throw new IllegalStateException("a broken handler");
      }
      handled.add(wrId);
      later.countDown();
    }, "test-cq");
    try {
      source.add(1);
      source.add(2);
      // The thread goes back to sleep after the failure; the next completion must wake it.
      Eventually.holds("the thread sleeps again after the failure", () -> handled.contains(2L) && source.sleeping);
      source.add(3);
      assertTrue(later.await(DEADLINE_SECONDS, TimeUnit.SECONDS),
          "completions after a throwing handler were not handled: " + handled);
      assertEquals(Set.of(2L, 3L), handled);
    } finally {
      closeWithin(poller);
    }
  }

  @Test
  void afterDrainRunsOnceWhatWasQueuedBeforeItWasTaken() throws Exception {
    MemoryCompletions source = new MemoryCompletions();
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    CountDownLatch ran = new CountDownLatch(1);
    AtomicReference<Set<Long>> seenByTask = new AtomicReference<>();
    CompletionPoller poller = new CompletionPoller(source, 64, 0, (wrId, status, len) -> handled.add(wrId),
        "test-cq");
    try {
      // Queued without an event, as the flushed completions of a destroyed queue pair may be.
      source.addQuietly(10);
      source.addQuietly(11);
      poller.afterDrain(() -> {
        seenByTask.set(Set.copyOf(handled));
        ran.countDown();
      });
      assertTrue(ran.await(DEADLINE_SECONDS, TimeUnit.SECONDS), "the task never ran on an idle queue");
      assertEquals(Set.of(10L, 11L), seenByTask.get(), "the task ran before the queue was drained past it");
    } finally {
      closeWithin(poller);
    }
    AtomicInteger afterClose = new AtomicInteger();
    poller.afterDrain(afterClose::incrementAndGet);
    assertEquals(1, afterClose.get(), "a task after close runs at once");
  }
}
