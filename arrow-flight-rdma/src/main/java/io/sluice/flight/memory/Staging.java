package io.sluice.flight.memory;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/**
 * The registered memory one data-plane stream serves bodies from: regions allocated for the one
 * peer that may READ them ({@link Transport#allocateFor}), each holding one body until the reader
 * acknowledges it, then reused for a later body. At most {@code window} bodies wait for
 * acknowledgement; regions are paid for from a {@link StagingBudget} shared with other streams,
 * and an idle region goes back to the budget as soon as another stream waits for memory.
 *
 * <p>Thread safe: the producing thread calls {@link #acquire}, the acknowledging thread {@link
 * #acknowledge}, anyone {@link #cancel}. {@link #close()} revokes every region at once (a READ
 * still being served keeps its memory alive until it finishes) and returns the memory.
 */
public final class Staging implements AutoCloseable {
  private static final int MIN_REGION = 64 << 10;
  private static final long MB = 1 << 20;

  private final Transport transport;
  private final long reader;
  private final StagingBudget budget;
  private final String budgetKey;
  private final int window;
  private final long timeoutNanos;
  private final Deque<RegisteredRegion> idle = new ArrayDeque<>();
  private final Deque<Slot> inFlight = new ArrayDeque<>();
  private long nextSequence;
  private Throwable cancelled;
  private boolean closed;

  /** A region holding the body numbered {@code sequence}. */
  public record Slot(long sequence, RegisteredRegion region) {}

  public Staging(Transport transport, long reader, StagingBudget budget, String budgetKey, int window,
      long timeoutNanos) {
    if (window < 1) {
      throw new IllegalArgumentException("window must be at least 1, got " + window);
    }
    this.transport = transport;
    this.reader = reader;
    this.budget = budget;
    this.budgetKey = budgetKey;
    this.window = window;
    this.timeoutNanos = timeoutNanos;
  }

  /**
   * A region of at least {@code length} bytes for the next body, waiting while the window is full
   * (for acknowledgements) or the budget is spent.
   *
   * @throws TimeoutException if the reader acknowledged nothing, or no memory came free, within
   *     the deadline
   * @throws CancellationException if the stream was cancelled
   */
  public Slot acquire(long length) throws TimeoutException, InterruptedException, TransportException {
    if (length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
    }
    long deadline = System.nanoTime() + timeoutNanos;
    RegisteredRegion region;
    synchronized (this) {
      while (inFlight.size() >= window) {
        checkCancelled();
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException("the reader acknowledged no batch within " + timeoutNanos / 1_000_000 + " ms");
        }
        wait(Math.max(1, left / 1_000_000));
      }
      checkCancelled();
      region = takeIdle(length);
    }
    if (region == null) {
      region = allocate(length, deadline);
    }
    synchronized (this) {
      if (cancelled != null || closed) {
        free(region);
        checkCancelled();
      }
      Slot slot = new Slot(nextSequence++, region);
      inFlight.addLast(slot);
      return slot;
    }
  }

  /** The reader has every body up to and including {@code sequence}. */
  public synchronized void acknowledge(long sequence) {
    if (sequence >= nextSequence) {
      throw new IllegalArgumentException("acknowledgement of body " + sequence + ", only " + nextSequence + " served");
    }
    while (!inFlight.isEmpty() && inFlight.peekFirst().sequence() <= sequence) {
      idle.addLast(inFlight.removeFirst().region());
    }
    if (budget.hasWaiters()) {
      // Another stream (or this one's producer) waits for memory: give back what sits idle.
      idle.forEach(this::free);
      idle.clear();
    }
    notifyAll();
  }

  /** Waits until every served body is acknowledged. */
  public synchronized void awaitAcknowledged() throws TimeoutException, InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (!inFlight.isEmpty()) {
      checkCancelled();
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("the reader did not acknowledge the last batches within "
            + timeoutNanos / 1_000_000 + " ms");
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }

  /** Fails the producer's waits with {@code cause}; the first cause wins. */
  public synchronized void cancel(Throwable cause) {
    if (cancelled == null) {
      cancelled = cause;
    }
    notifyAll();
  }

  public synchronized boolean isCancelled() {
    return cancelled != null;
  }

  /** How long the producer waits for acknowledgements or memory. */
  public long timeoutNanos() {
    return timeoutNanos;
  }

  /** Bodies served and not yet acknowledged. */
  public synchronized int inFlight() {
    return inFlight.size();
  }

  @Override
  public void close() {
    List<RegisteredRegion> all = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (cancelled == null) {
        cancelled = new CancellationException("stream closed");
      }
      all.addAll(idle);
      inFlight.forEach(s -> all.add(s.region()));
      idle.clear();
      inFlight.clear();
      notifyAll();
    }
    all.forEach(this::free);
  }

  private void checkCancelled() {
    if (cancelled != null) {
      CancellationException e = new CancellationException("stream cancelled: " + cancelled.getMessage());
      e.initCause(cancelled);
      throw e;
    }
  }

  /** The smallest idle region that fits, or null; too-small idle regions are freed for room. */
  private RegisteredRegion takeIdle(long length) {
    RegisteredRegion best = null;
    for (RegisteredRegion r : idle) {
      if (r.length() >= length && (best == null || r.length() < best.length())) {
        best = r;
      }
    }
    if (best != null) {
      idle.remove(best);
      return best;
    }
    for (Iterator<RegisteredRegion> it = idle.iterator(); it.hasNext(); ) {
      free(it.next());
      it.remove();
    }
    return null;
  }

  private RegisteredRegion allocate(long length, long deadline)
      throws TimeoutException, InterruptedException, TransportException {
    long size = regionSize(length);
    if (size > budget.limit()) {
      size = Math.max(length, 1);
    }
    budget.acquire(size, deadline, budgetKey);
    try {
      return transport.allocateFor(reader, (int) size);
    } catch (TransportException | RuntimeException e) {
      budget.release(size);
      throw e;
    }
  }

  private void free(RegisteredRegion r) {
    long size = r.length();
    r.close();
    budget.release(size);
  }

  /** Powers of two up to 8 MiB (so regions are reused across batch sizes), then whole MiB. */
  static long regionSize(long length) {
    if (length <= MIN_REGION) {
      return MIN_REGION;
    }
    if (length <= 8 * MB) {
      return Long.highestOneBit(length - 1) << 1;
    }
    return Math.min(Integer.MAX_VALUE, (length + MB - 1) / MB * MB);
  }
}
