package io.sluice.transport.verbs.rc;

import io.sluice.transport.TransportException;
import java.util.concurrent.CompletableFuture;

/**
 * A slot on a queue pair's send queue (a READ or a SEND), built once with its own work
 * request id and posted again after each completion. The send queue completes in posting
 * order, so one signaled completion retires every entry posted before it.
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}.
 */
abstract class SendQueueEntry implements WorkRequest, Outstanding {
  private final RdmaQueuePair owner;
  private final long wrId;
  /** Whether the entry is on the send queue now. */
  boolean posted;
  /** The future of the work posted through the entry now; null while it is idle. */
  CompletableFuture<Void> future;

  SendQueueEntry(RdmaQueuePair owner, long wrId) {
    this.owner = owner;
    this.wrId = wrId;
  }

  @Override
  public final long wrId() {
    return wrId;
  }

  @Override
  public final void completed(int status, int byteLength) {
    owner.sendQueueCompleted(this, status);
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
