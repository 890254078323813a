package io.sluice.transport.verbs.rc;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The entries on one queue pair's send queue, in posting order. READs and SENDs share the
 * queue, and the device completes it in order: a signaled completion (or the last READ of a
 * post) means every entry posted before it is done too.
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}.
 */
final class SendQueue {
  private final ArrayDeque<SendQueueEntry> entries;

  SendQueue(int capacity) {
    this.entries = new ArrayDeque<>(Math.max(1, capacity));
  }

  /** An entry about to be posted. */
  void add(SendQueueEntry entry) {
    entry.posted = true;
    entries.add(entry);
  }

  /**
   * Retires every entry up to and including {@code entry}, adding their futures to {@code
   * done}; false (and nothing retired) if {@code entry} is not on the queue.
   */
  boolean retireThrough(SendQueueEntry entry, List<CompletableFuture<Void>> done) {
    if (!entry.posted) {
      return false;
    }
    SendQueueEntry e;
    do {
      e = entries.poll();
      e.posted = false;
      done.add(e.retire());
    } while (e != entry);
    return true;
  }

  /** Takes every entry still posted (the queue pair failed); they stay marked posted. */
  void drainTo(List<Outstanding> out) {
    out.addAll(entries);
    entries.clear();
  }
}
