package io.sluice.transport.verbs.rc;

import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The READ side of one queue pair: a ring of READ slots, each with its work request built
 * once in a {@link ReadChain} and its own work request id, at most one READ per slot. READs
 * beyond the ring wait in order; each post takes every READ that fits and hands them to the
 * device as one chain whose last READ alone is signaled. READs complete in order among
 * themselves (only READ completions retire them, see {@link SendQueue}), so slots retire in
 * ring order and are reused as they do.
 *
 * <p>Each READ has a deadline from its submission; {@link #expired} names the oldest READ
 * that passed it (READs are retired oldest first, so only the ring's head and the first
 * waiting READ need looking at).
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}; created and closed by it.
 */
final class ReadPath implements AutoCloseable {

  /** One slot of the ring: the READ posted through it now, if any. */
  final class ReadSlot extends SendQueueEntry {
    final int index;
    long deadline;
    /** Set when this READ passed its deadline: it fails with this instead of the queue pair's cause. */
    TransportTimeoutException timedOut;

    ReadSlot(int index, long slot) {
      super(owner, slot, Kind.READ);
      this.index = index;
    }

    @Override
    void freed() {
      timedOut = null;
      head = head + 1 == slots.length ? 0 : head + 1;
      inFlight--;
    }

    @Override
    public void fail(TransportException cause) {
      super.fail(timedOut != null ? timedOut : cause);
    }
  }

  /** A READ waiting for a free slot. */
  static final class WaitingRead implements Outstanding {
    final RdmaRead read;
    final CompletableFuture<Void> future;
    final long deadline;
    TransportTimeoutException timedOut;

    WaitingRead(RdmaRead read, CompletableFuture<Void> future, long deadline) {
      this.read = read;
      this.future = future;
      this.deadline = deadline;
    }

    @Override
    public void fail(TransportException cause) {
      future.completeExceptionally(timedOut != null ? timedOut : cause);
    }
  }

  /** Hands a run of the chain's slots to the device. */
  interface Poster {
    void post(int first, int count) throws IOException;
  }

  private final RdmaQueuePair owner;
  private final Poster poster;
  private final SendQueue sendQueue;
  private final ReadChain chain;
  private final ReadSlot[] slots;
  private final ArrayDeque<WaitingRead> waiting = new ArrayDeque<>();
  /** The oldest slot in flight, and how many are (posted or staged for the next post). */
  private int head;
  private int inFlight;
  /** Slots filled since the last post, the newest {@code staged} of those in flight. */
  private int staged;

  /**
   * A READ path over {@code chain} (which it owns from now on), one slot per chain slot,
   * with slot numbers from {@code slotIds}; {@code poster} posts runs of the chain.
   */
  ReadPath(RdmaQueuePair owner, LongSupplier slotIds, SendQueue sendQueue, ReadChain chain, Poster poster) {
    this.owner = owner;
    this.poster = poster;
    this.sendQueue = sendQueue;
    this.chain = chain;
    this.slots = new ReadSlot[chain.capacity()];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = new ReadSlot(i, slotIds.getAsLong());
    }
  }

  /** The work requests to route completions to, for the queue pair's lifetime. */
  ReadSlot[] slots() {
    return slots;
  }

  /**
   * Takes one READ: into the next free slot when no READ waits before it, else into the
   * waiting line. Call {@link #post} once after the batch. Holds the lock.
   */
  void submit(RdmaRead read, CompletableFuture<Void> future, long deadline) {
    if (waiting.isEmpty() && inFlight < slots.length) {
      stage(read, future, deadline);
    } else {
      waiting.add(new WaitingRead(read, future, deadline));
    }
  }

  private void stage(RdmaRead read, CompletableFuture<Void> future, long deadline) {
    int at = head + inFlight;
    ReadSlot slot = slots[at >= slots.length ? at - slots.length : at];
    slot.future = future;
    slot.deadline = deadline;
    slot.timedOut = null;
    chain.set(slot.index, sendQueue.add(slot), read, false);
    inFlight++;
    staged++;
  }

  /**
   * Moves waiting READs into free slots and posts every staged READ as one chain, the last
   * one signaled. Holds the lock.
   *
   * @throws IOException if posting failed (the READs stay outstanding; the queue pair fails)
   */
  void post() throws IOException {
    while (!waiting.isEmpty() && inFlight < slots.length) {
      WaitingRead w = waiting.poll();
      stage(w.read, w.future, w.deadline);
    }
    if (staged == 0) {
      return;
    }
    int count = staged;
    int first = head + inFlight - count;
    first = first >= slots.length ? first - slots.length : first;
    int last = first + count - 1;
    chain.signal(last >= slots.length ? last - slots.length : last);
    staged = 0;
    poster.post(first, count);
  }

  /**
   * Whether the oldest READ passed its deadline by {@code now}; if so it is marked to fail
   * with {@code timeout}'s exception. Holds the lock.
   */
  boolean expired(long now, Supplier<TransportTimeoutException> timeout) {
    if (inFlight > 0 && slots[head].deadline - now <= 0) {
      slots[head].timedOut = timeout.get();
      return true;
    }
    WaitingRead first = waiting.peek();
    if (first != null && first.deadline - now <= 0) {
      first.timedOut = timeout.get();
      return true;
    }
    return false;
  }

  /** Takes the READs still waiting (the queue pair failed). Holds the lock. */
  void drainWaiting(List<Outstanding> out) {
    out.addAll(waiting);
    waiting.clear();
  }

  /** Frees the chain's native memory; after the queue pair is destroyed. */
  @Override
  public void close() {
    chain.close();
  }

  /** The chain, for tests of what a post hands to the device. */
  ReadChain chain() {
    return chain;
  }
}
