package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvContext;
import java.io.IOException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One completion queue of a node and the thread that drains it. When the queue is empty the
 * thread first polls it for up to {@code spinNanos} (busy, no system call but the poll), and
 * only then arms the queue and sleeps on its completion channel (in slices of {@value
 * #WAIT_SLICE_MS} ms so it notices {@link #close}): completions that follow each other closely
 * are taken without a wake-up each. With {@code spinNanos} 0 the thread never spins.
 *
 * <p>A caller waiting for a completion may drain the queue itself ({@link #tryDrain}): one
 * thread drains at a time (the other one skips), and each completion is handed to the {@link
 * Handler} on the thread that polled it.
 *
 * <p>A handler that throws is logged and the thread goes on with the next completion: one
 * bad completion must not stop the thread that every READ on the queue waits for. {@link
 * #afterDrain} runs a task once the queue was drained empty after the call (a destroyed queue
 * pair's flushed completions are all taken by then).
 *
 * <p>Thread safety: {@link #cq()}, {@link #tryDrain} and {@link #afterDrain} may be used from
 * any thread; {@link #close()} once, after every queue pair on the CQ is destroyed.
 */
final class CompletionPoller implements AutoCloseable {

  /** Receives each completion on the draining thread; must not block. */
  interface Handler {
    /** {@code byteLength} is what a receive got; meaningful only for successful receives. */
    void completed(long wrId, int status, int byteLength);
  }

  private static final Logger LOG = LoggerFactory.getLogger(CompletionPoller.class);
  private static final int WAIT_SLICE_MS = 100;

  private final CompletionSource source;
  private final IbvCQ cq;
  private final Handler handler;
  private final long spinNanos;
  /** Held by whichever thread polls the queue now. */
  private final ReentrantLock draining = new ReentrantLock();
  private final Thread thread;
  /** Tasks waiting for the next drain that empties the queue; taken under {@link #draining}. */
  private final ConcurrentLinkedQueue<Runnable> afterDrain = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;
  /** Set once the CQ is destroyed: nobody may poll it any more. Guarded by {@link #draining}. */
  private boolean destroyed;

  private final int entries;
  /** CQ entries promised to queue pairs; guarded by the owning {@link CompletionQueues}. */
  int reserved;

  /** A poller of a new completion queue of {@code entries} on the device. */
  CompletionPoller(IbvContext context, int entries, long spinNanos, Handler handler, String name) throws IOException {
    this(new DeviceCompletions(context, entries), entries, spinNanos, handler, name);
  }

  /** A poller of {@code source}, which it owns from now on; starts its thread. */
  CompletionPoller(CompletionSource source, int entries, long spinNanos, Handler handler, String name) {
    this.source = source;
    this.cq = source instanceof DeviceCompletions d ? d.cq() : null;
    this.handler = (wrId, status, byteLength) -> {
      try {
        handler.completed(wrId, status, byteLength);
      } catch (RuntimeException e) {
        LOG.error("handling the completion of work request {} failed; the completion thread goes on", wrId, e);
      }
    };
    this.entries = entries;
    this.spinNanos = spinNanos;
    this.thread = new Thread(this::loop, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** The device queue, to create queue pairs on (null for a source that is not a device's). */
  IbvCQ cq() {
    return cq;
  }

  int entries() {
    return entries;
  }

  private void loop() {
    try {
      while (running) {
        if (drain() > 0 || spin()) {
          continue;
        }
        source.arm();
        // Completions that arrived before the CQ was armed raise no event.
        if (drain() > 0) {
          continue; // the armed CQ may raise an event for a later one: the next wait takes it at once
        }
        source.await(WAIT_SLICE_MS);
      }
    } catch (IOException | RuntimeException e) {
      if (running) {
        LOG.error("completion queue failed; READs on this node will time out", e);
      }
    }
  }

  /** Polls the empty CQ for up to spinNanos; true as soon as a completion was handled. */
  private boolean spin() throws IOException {
    if (spinNanos <= 0) {
      return false;
    }
    long end = System.nanoTime() + spinNanos;
    do {
      if (drain() > 0) {
        return true;
      }
      Thread.onSpinWait();
    } while (running && System.nanoTime() - end < 0);
    return false;
  }

  /** Handles every completion queued now; returns how many. */
  private int drain() throws IOException {
    draining.lock();
    try {
      return drainLocked();
    } finally {
      draining.unlock();
    }
  }

  /**
   * Drains the CQ on this thread unless another thread is draining it (or this thread is,
   * further up its stack); returns how many completions this call handled.
   *
   * @throws IOException if polling failed
   */
  int tryDrain() throws IOException {
    // A callback on the draining thread that waits must not poll again under the batch it runs in.
    if (draining.isHeldByCurrentThread() || !draining.tryLock()) {
      return 0;
    }
    try {
      return drainLocked();
    } finally {
      draining.unlock();
    }
  }

  private int drainLocked() throws IOException {
    if (destroyed) {
      return 0;
    }
    int due = afterDrain.size(); // queued before this drain began: this drain takes what they wait for
    int total = 0;
    int polled;
    do {
      polled = source.poll(handler);
      total += polled;
    } while (polled == source.batch());
    for (int i = 0; i < due; i++) {
      run(afterDrain.poll());
    }
    return total;
  }

  /**
   * Runs {@code task} after the next drain that empties the queue, on the draining thread
   * (within about one wait slice when the queue is idle), or at once if the queue is
   * destroyed. Everything queued before this call is handled by then.
   */
  void afterDrain(Runnable task) {
    draining.lock();
    try {
      if (!destroyed) {
        afterDrain.add(task);
        return;
      }
    } finally {
      draining.unlock();
    }
    run(task);
  }

  private static void run(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      LOG.warn("a task after draining the completion queue failed", e);
    }
  }

  /**
   * Stops the thread (within about one wait slice, or at once while it spins) and destroys
   * the queue; completions still queued are handled first, on this thread. Waits at most 5 s
   * for the thread: if it does not stop, the queue is left in place.
   */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      LOG.warn("completion thread did not stop; leaving its CQ in place");
      return;
    }
    draining.lock();
    try {
      try {
        drainLocked();
      } catch (IOException | RuntimeException e) {
        LOG.warn("draining the completion queue before destroying it failed", e);
      }
      destroyed = true;
      for (Runnable task; (task = afterDrain.poll()) != null;) {
        run(task);
      }
      source.close();
    } catch (IOException e) {
      LOG.warn("destroying the completion queue failed", e);
    } finally {
      draining.unlock();
    }
  }
}
