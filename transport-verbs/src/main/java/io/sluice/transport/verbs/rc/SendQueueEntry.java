package io.sluice.transport.verbs.rc;

import io.sluice.transport.TransportException;
import java.util.concurrent.CompletableFuture;

/**
 * A slot on a queue pair's send queue (a READ or a SEND), built once with its own slot
 * number and posted again after each completion, each time with the next generation in its
 * work request id ({@link WorkRequestIds}). Entries of one kind complete in posting order, so
 * one signaled completion retires every entry of its kind posted before it ({@link
 * SendQueue}).
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}.
 */
abstract class SendQueueEntry implements WorkRequest, Outstanding {

  /**
   * What an entry carries. The kinds complete in order among themselves, not with each other:
   * soft-iWARP reports a SEND once it is transmitted but a READ only once its reply is
   * placed, so a SEND posted after a READ may complete first.
   */
  enum Kind { READ, SEND }

  private final RdmaQueuePair owner;
  private final long slot;
  final Kind kind;
  /** The use of the slot now; its work request id carries it. */
  private int generation;
  /** Whether the entry is on the send queue now. */
  boolean posted;
  /** The future of the work posted through the entry now; null while it is idle. */
  CompletableFuture<Void> future;

  SendQueueEntry(RdmaQueuePair owner, long slot, Kind kind) {
    this.owner = owner;
    this.slot = slot;
    this.kind = kind;
  }

  @Override
  public final long slot() {
    return slot;
  }

  @Override
  public final RdmaQueuePair owner() {
    return owner;
  }

  /** The work request id of the slot's current (or last) use: what the device reports back. */
  final long postedWrId() {
    return WorkRequestIds.of(slot, generation);
  }

  /** Starts the slot's next use (about to be posted); returns the id to post it with. */
  final long nextUse() {
    generation = WorkRequestIds.next(generation);
    return postedWrId();
  }

  /** Whether a completion's id names the slot's current use rather than an earlier one. */
  final boolean isCurrent(long wrId) {
    return WorkRequestIds.slot(wrId) == slot && WorkRequestIds.generation(wrId) == generation;
  }

  @Override
  public final void completed(long wrId, int status, int byteLength) {
    owner.sendQueueCompleted(this, wrId, status);
  }

  /**
   * The work completed: frees the slot for its next use and returns the future to complete
   * once the lock is released. Holds the lock.
   */
  final CompletableFuture<Void> retire() {
    CompletableFuture<Void> f = future;
    future = null;
    freed();
    return f;
  }

  /** Makes the slot ready for its next use once its work completed. Holds the lock. */
  abstract void freed();

  @Override
  public void fail(TransportException cause) {
    if (future != null) {
      future.completeExceptionally(cause);
    }
  }
}
