package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The completion queues of a node. Every queue pair reserves, on one queue, as many entries
 * as it can have work requests outstanding (sends plus receives), so a queue never overflows;
 * when no queue has room a new one is opened, each drained by its own thread, up to a bound.
 *
 * <p>Thread safe. {@link #close()} after every queue pair is destroyed.
 */
final class CompletionQueues implements AutoCloseable {

  /** Entries reserved on one queue for one queue pair; give it back with {@link #release}. */
  record Reservation(CompletionPoller poller, int entries) {}

  private final IbvContext context;
  private final int entriesPerQueue;
  private final int maxQueues;
  private final long spinNanos;
  private final CompletionPoller.Handler handler;
  private final List<CompletionPoller> pollers = new ArrayList<>();
  /** The pollers as an array for callers that drain them without this lock; replaced on change. */
  private volatile CompletionPoller[] snapshot = new CompletionPoller[0];
  private boolean closed;

  CompletionQueues(IbvContext context, int entriesPerQueue, int maxQueues, long spinNanos,
      CompletionPoller.Handler handler) {
    this.context = context;
    this.entriesPerQueue = entriesPerQueue;
    this.maxQueues = maxQueues;
    this.spinNanos = spinNanos;
    this.handler = handler;
  }

  /**
   * Drains every queue no other thread is draining, on this thread; returns how many
   * completions it handled. For a caller that waits for a completion and would rather poll
   * than be woken.
   */
  int tryDrainAll() {
    int handled = 0;
    for (CompletionPoller p : snapshot) {
      try {
        handled += p.tryDrain();
      } catch (java.io.IOException e) {
        return handled; // the queue's own thread reports the failure
      }
    }
    return handled;
  }

  /**
   * Reserves {@code entries} on a queue with room, opening a queue if none has.
   *
   * @throws IOException if the node is closed, a queue pair asks for more than one queue
   *     holds, or every queue is full and no more may be opened
   */
  synchronized Reservation reserve(int entries) throws IOException {
    if (closed) {
      throw new IOException("the RDMA node is closed");
    }
    if (entries <= 0 || entries > entriesPerQueue) {
      throw new IOException("a queue pair needing " + entries + " completion entries does not fit a queue of "
          + entriesPerQueue);
    }
    for (CompletionPoller p : pollers) {
      if (p.entries() - p.reserved >= entries) {
        p.reserved += entries;
        return new Reservation(p, entries);
      }
    }
    if (pollers.size() >= maxQueues) {
      throw new IOException("all " + maxQueues + " completion queues of " + entriesPerQueue
          + " entries are taken by open queue pairs");
    }
    CompletionPoller p = new CompletionPoller(context, entriesPerQueue, spinNanos, handler,
        "sluice-verbs-cq-" + pollers.size());
    pollers.add(p);
    snapshot = pollers.toArray(new CompletionPoller[0]);
    p.reserved = entries;
    return new Reservation(p, entries);
  }

  synchronized void release(Reservation r) {
    r.poller().reserved -= r.entries();
  }

  synchronized int queueCount() {
    return pollers.size();
  }

  @Override
  public void close() {
    List<CompletionPoller> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(pollers);
      pollers.clear();
      snapshot = new CompletionPoller[0];
    }
    all.forEach(CompletionPoller::close);
  }
}
