package io.sluice.flight.memory;

import io.sluice.flight.plane.AckWindow;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegisteredAllocator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/**
 * The registered memory a data-plane put sends bodies from: regions allocated for the one
 * peer that may READ them ({@link Transport#allocateFor}), each holding one body until the reader
 * acknowledges it, then reused for a later body. At most {@code window} bodies wait for
 * acknowledgement; regions come from a child of the session's {@link RegisteredAllocator} whose
 * limit is the staging budget, and an idle region is freed as soon as anyone in that tree waits
 * for memory.
 *
 * <p>Thread safe: the producing thread calls {@link #acquire}, the acknowledging thread {@link
 * #acknowledge}, anyone {@link #cancel}. {@link #close()} revokes every region at once (a READ
 * still being served keeps its memory alive until it finishes) and returns the memory.
 */
public final class Staging implements AutoCloseable {
  private final RegisteredAllocator memory;
  private final String budgetKey;
  private final AckWindow window;
  private final Deque<Slot> inFlight = new ArrayDeque<>();
  private boolean closed;

  /** A region holding the body numbered {@code sequence}. */
  public record Slot(long sequence, RegisteredRegion region) {}

  /**
   * Staging under {@code parent} for bodies that only the peer {@code reader} may READ, holding at
   * most {@code budgetBytes} (the value of the setting {@code budgetKey}).
   */
  public Staging(RegisteredAllocator parent, long reader, long budgetBytes, String budgetKey, int window,
      long timeoutNanos) {
    this.memory = parent.newChild("staging for node " + reader, AllocatorOptions.DEFAULTS.withLimit(budgetBytes)
        .withReader(reader).withReuse(BodySizes.STAGING, budgetBytes));
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
    long needed = Math.max(length, 1);
    if (needed > memory.limit()) {
      throw new IllegalArgumentException("a batch body needs " + needed + " bytes of registered memory, more than "
          + budgetKey + " = " + memory.limit() + " allows");
    }
    RegisteredRegion region;
    try {
      region = memory.allocate(length, deadline);
    } catch (IllegalStateException e) {
      if (!memory.isClosed()) {
        throw e;
      }
      throw new CancellationException("stream closed");
    }
    synchronized (this) {
      if (closed) {
        memory.free(region);
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
      memory.release(inFlight.removeFirst().region());
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

  /** Bytes of registered memory this stream holds now, and the most it ever held. */
  public long heldBytes() {
    return memory.allocatedBytes();
  }

  public long peakBytes() {
    return memory.peakBytes();
  }

  @Override
  public void close() {
    List<RegisteredRegion> all = new ArrayList<>();
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      inFlight.forEach(s -> all.add(s.region()));
      inFlight.clear();
    }
    window.cancel(new CancellationException("stream closed"));
    all.forEach(memory::free);
    memory.shutdown(); // a producer still registering frees its region when it sees the close
  }
}
