package io.sluice.flight.plane;

import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/**
 * The acknowledgement window of one data-plane stream: the sender numbers its bodies from 0 and
 * may have at most {@code window} of them unacknowledged; acknowledgements are cumulative. Every
 * wait has the deadline {@code timeoutNanos}, and {@link #cancel} fails waits at once.
 *
 * <p>Thread safe: the sending thread calls {@link #next} and {@link #awaitAll}, the reading
 * thread {@link #acknowledge}, anyone {@link #cancel}.
 */
public final class AckWindow {
  private final int window;
  private final long timeoutNanos;
  private long sent;
  private long acknowledged;
  private Throwable cancelled;

  public AckWindow(int window, long timeoutNanos) {
    if (window < 1) {
      throw new IllegalArgumentException("window must be at least 1, got " + window);
    }
    this.window = window;
    this.timeoutNanos = timeoutNanos;
  }

  /** The sequence number of the next body, once the window has room. */
  public synchronized long next() throws TimeoutException, InterruptedException {
    await(window - 1, "the reader acknowledged no batch within ");
    return sent++;
  }

  /** Waits until every body sent is acknowledged. */
  public synchronized void awaitAll() throws TimeoutException, InterruptedException {
    await(0, "the reader did not acknowledge the last batches within ");
  }

  /** The reader has every body up to and including {@code sequence}. */
  public synchronized void acknowledge(long sequence) {
    if (sequence >= sent) {
      throw new IllegalArgumentException("acknowledgement of body " + sequence + ", only " + sent + " sent");
    }
    acknowledged = Math.max(acknowledged, sequence + 1);
    notifyAll();
  }

  /** Fails the sender's waits with {@code cause}; the first cause wins. */
  public synchronized void cancel(Throwable cause) {
    if (cancelled == null) {
      cancelled = cause;
    }
    notifyAll();
  }

  public synchronized boolean isCancelled() {
    return cancelled != null;
  }

  /** Bodies sent and not yet acknowledged. */
  public synchronized long unacknowledged() {
    return sent - acknowledged;
  }

  public long timeoutNanos() {
    return timeoutNanos;
  }

  private void await(long maxUnacknowledged, String what) throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      if (cancelled != null) {
        CancellationException e = new CancellationException("stream cancelled: " + cancelled.getMessage());
        e.initCause(cancelled);
        throw e;
      }
      if (sent - acknowledged <= maxUnacknowledged) {
        return;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException(what + timeoutNanos / 1_000_000 + " ms");
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }
}
