package io.sluice.flight.memory;

import io.sluice.flight.plane.AckWindow;
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
 * The registered memory a data-plane put sends bodies from: regions allocated for the one
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
  private final AckWindow window;
  private final Deque<RegisteredRegion> idle = new ArrayDeque<>();
  private final Deque<Slot> inFlight = new ArrayDeque<>();
  private boolean closed;

  /** A region holding the body numbered {@code sequence}. */
  public record Slot(long sequence, RegisteredRegion region) {}

  public Staging(Transport transport, long reader, StagingBudget budget, String budgetKey, int window,
      long timeoutNanos) {
    this.transport = transport;
    this.reader = reader;
    this.budget = budget;
    this.budgetKey = budgetKey;
    this.window = new AckWindow(window, timeoutNanos);
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
    long deadline = System.nanoTime() + window.timeoutNanos();
    long sequence = window.next();
    RegisteredRegion region;
    synchronized (this) {
      region = takeIdle(length);
    }
    if (region == null) {
      region = allocate(length, deadline);
    }
    synchronized (this) {
      if (closed) {
        free(region);
        throw new CancellationException("stream closed");
      }
      Slot slot = new Slot(sequence, region);
      inFlight.addLast(slot);
      return slot;
    }
  }

  /** The reader has every body up to and including {@code sequence}. */
  public synchronized void acknowledge(long sequence) {
    window.acknowledge(sequence);
    while (!inFlight.isEmpty() && inFlight.peekFirst().sequence() <= sequence) {
      idle.addLast(inFlight.removeFirst().region());
    }
    if (budget.hasWaiters()) {
      // Another stream (or this one's producer) waits for memory: give back what sits idle.
      idle.forEach(this::free);
      idle.clear();
    }
  }

  /** Waits until every served body is acknowledged. */
  public void awaitAcknowledged() throws TimeoutException, InterruptedException {
    window.awaitAll();
  }

  /** Fails the producer's waits with {@code cause}; the first cause wins. */
  public void cancel(Throwable cause) {
    window.cancel(cause);
  }

  public boolean isCancelled() {
    return window.isCancelled();
  }

  /** How long the producer waits for acknowledgements or memory. */
  public long timeoutNanos() {
    return window.timeoutNanos();
  }

  /** Bodies served and not yet acknowledged. */
  public long inFlight() {
    return window.unacknowledged();
  }

  @Override
  public void close() {
    List<RegisteredRegion> all = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      all.addAll(idle);
      inFlight.forEach(s -> all.add(s.region()));
      idle.clear();
      inFlight.clear();
    }
    window.cancel(new CancellationException("stream closed"));
    all.forEach(this::free);
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
