package io.sluice.transport.verbs.rc;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The entries on one queue pair's send queue, in posting order, kept per {@link
 * SendQueueEntry.Kind}: READs and SENDs share the device's queue, but only entries of one kind
 * are sure to complete in order. InfiniBand and RoCE devices complete the whole queue in
 * order; soft-iWARP completes a SEND when it is transmitted and a READ when its reply is
 * placed, so a SEND's completion says nothing about the READs posted before it. A completion
 * therefore retires only the entries of its own kind posted up to it: a READ slot is reused,
 * and its landing memory handed back, only once a READ completion covers it.
 *
 * <p>Every post of READs ends with a signaled READ, and a caller that posts unsignaled SENDs
 * signals one before it would wait for their slots ({@link RdmaQueuePair#send}), so every
 * entry is covered by a completion of its kind.
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}.
 */
final class SendQueue {
  private final ArrayDeque<SendQueueEntry> reads;
  private final ArrayDeque<SendQueueEntry> sends;

  SendQueue(int capacity) {
    this.reads = new ArrayDeque<>(Math.max(1, capacity));
    this.sends = new ArrayDeque<>(Math.max(1, capacity));
  }

  /** An entry about to be posted; returns the work request id to post it with. */
  long add(SendQueueEntry entry) {
    entry.posted = true;
    queue(entry).add(entry);
    return entry.nextUse();
  }

  /**
   * A successful completion with id {@code wrId} for {@code entry}: retires every entry of the
   * same kind up to and including it, adding their futures to {@code done}. False (and nothing
   * retired) if {@code entry} is not on the queue or {@code wrId} names an earlier use of it.
   */
  boolean retireThrough(SendQueueEntry entry, long wrId, List<CompletableFuture<Void>> done) {
    if (!entry.posted || !entry.isCurrent(wrId)) {
      return false;
    }
    ArrayDeque<SendQueueEntry> queue = queue(entry);
    SendQueueEntry e;
    do {
      e = queue.poll();
      e.posted = false;
      done.add(e.retire());
    } while (e != entry);
    return true;
  }

  /** Entries of {@code kind} on the queue now. */
  int size(SendQueueEntry.Kind kind) {
    return (kind == SendQueueEntry.Kind.READ ? reads : sends).size();
  }

  /** Takes every entry still posted (the queue pair failed); they stay marked posted. */
  void drainTo(List<Outstanding> out) {
    out.addAll(reads);
    out.addAll(sends);
    reads.clear();
    sends.clear();
  }

  private ArrayDeque<SendQueueEntry> queue(SendQueueEntry entry) {
    return entry.kind == SendQueueEntry.Kind.READ ? reads : sends;
  }
}
