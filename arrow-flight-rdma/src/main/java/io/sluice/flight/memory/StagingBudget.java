package io.sluice.flight.memory;

import java.util.concurrent.TimeoutException;

/**
 * A bound on registered memory shared by many streams: a stream takes bytes before it registers
 * a region and gives them back when it closes it. A stream that finds the budget spent waits
 * (with a deadline) instead of growing past it. Thread safe.
 */
public final class StagingBudget {
  private final long limit;
  private long used;
  private long peak;
  private int waiters;

  public StagingBudget(long limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("budget must be positive, got " + limit);
    }
    this.limit = limit;
  }

  /**
   * Takes {@code bytes}, waiting until they are free or the deadline ({@link System#nanoTime()})
   * passes.
   *
   * @throws IllegalArgumentException if {@code bytes} exceeds the whole budget
   * @throws TimeoutException if the deadline passed first
   */
  public synchronized void acquire(long bytes, long deadlineNanos, String budgetKey)
      throws TimeoutException, InterruptedException {
    if (bytes > limit) {
      throw new IllegalArgumentException("a batch body needs " + bytes + " bytes of registered memory, more than "
          + budgetKey + " = " + limit + " allows");
    }
    waiters++;
    try {
      while (used + bytes > limit) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException("registered memory stayed full (" + used + " of " + limit + " bytes in use)");
        }
        wait(Math.max(1, left / 1_000_000), 0);
      }
    } finally {
      waiters--;
    }
    used += bytes;
    peak = Math.max(peak, used);
  }

  public synchronized void release(long bytes) {
    used -= bytes;
    if (used < 0) {
      used = 0;
      throw new IllegalStateException("released more registered memory than was taken");
    }
    notifyAll();
  }

  /** True while some stream waits for memory: holders should give back what they can spare. */
  public synchronized boolean hasWaiters() {
    return waiters > 0;
  }

  public synchronized long used() {
    return used;
  }

  /** The most ever in use at once. */
  public synchronized long peak() {
    return peak;
  }

  public long limit() {
    return limit;
  }
}
