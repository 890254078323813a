package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCmId;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reliable-connected queue pair, opened by {@link RdmaNode#prepare} or accepted from an
 * admitted peer: its life (open, failed, destroyed) and the two kinds of work it carries,
 * each in a class of its own: READs from the peer's registered memory ({@link ReadPath}, at
 * most {@code sizes.reads()} posted, the rest waiting in order, each bounded by the read
 * timeout) and two-sided messages ({@link MessagePath}: SEND slots, at most {@code
 * sizes.sends()} outstanding, and receive slots posted ahead, at most {@code
 * sizes.receives()}). Every work request is built once, with its own id, and posted again
 * with only addresses, lengths, keys and flags changed.
 *
 * <p>Signaling: READs complete in order among themselves and SENDs among themselves, but not
 * with each other on every device ({@link SendQueue}), so only the last READ of each post and
 * the SENDs the caller asks for are signaled, and a signaled completion completes everything
 * of its kind posted before it. Each post of a slot carries the next generation in its work
 * request id ({@link WorkRequestIds}); a completion of an earlier use is ignored. A failed
 * work request reports itself whether signaled or not.
 *
 * <p>A queue pair that sees one failed completion, a timeout or any rdma_cm event but
 * ESTABLISHED is finished: it disconnects (the device moves it to the error state), tells its
 * failure listeners at once, and the caller opens a new one. The futures of work that was
 * outstanding fail only once the queue pair is destroyed: after ibv_destroy_qp returns the
 * device no longer touches its buffers, so a READ that failed never lands in a destination
 * the caller has reused, even if the disconnect itself failed. For the same reason memory
 * the queue pair's work requests name is freed by {@link #onDestroyed} hooks, never by a
 * failure listener: soft-iWARP places data into pinned pages until the queue pair is
 * destroyed, whatever state it is in.
 *
 * <p>Its completion entries are given back only once its completion queue was drained after
 * the destruction (its flushed completions may still be queued there until then), so a new
 * queue pair never overfills the queue.
 *
 * <p>A queue pair lives in one {@link ProtectionDomain} and holds a reference to it until it
 * is destroyed. {@link #faultedByPeer()} tells whether the peer broke it (see there).
 *
 * <p>Thread safe: work may be posted from any thread (under this object's lock, which the
 * paths share). Completions are handled on whichever thread drains the completion queue (the
 * node's completion thread, or a caller waiting on a {@link PolledFuture}); futures
 * complete there, so callbacks must not block.
 */
public final class RdmaQueuePair implements AutoCloseable {

  /** Work requests a queue pair may have outstanding, by kind. */
  public record Sizes(int reads, int sends, int receives) {
    public Sizes {
      if (reads < 1 || sends < 0 || receives < 0) {
        throw new IllegalArgumentException("queue pair sizes " + reads + "/" + sends + "/" + receives);
      }
    }

    int sendQueue() {
      return reads + sends;
    }

    /** Completion entries the pair can need at once. */
    int completions() {
      return reads + sends + receives;
    }
  }

  /** Told how many bytes a posted receive got; called where completions are handled, must not block. */
  public interface Receiver {
    void received(int byteLength);
  }

  private static final Logger LOG = LoggerFactory.getLogger(RdmaQueuePair.class);

  private final RdmaNode node;
  private final RdmaCmId id;
  private final IbvQP qp;
  private final String peer;
  private final CompletionQueues.Reservation reservation;
  private final ProtectionDomain domain;

  /** Guarded by this. */
  private final SendQueue sendQueue;
  private final ReadPath reads;
  private final MessagePath messages;
  private final List<Consumer<TransportException>> failureListeners = new ArrayList<>();
  /** Run once the queue pair is destroyed; guarded by this. */
  private final List<Runnable> destroyHooks = new ArrayList<>();
  /**
   * Futures retired by one completion, completed once the lock is released; used only by the
   * thread draining this queue pair's completion queue (one at a time).
   */
  private final List<CompletableFuture<Void>> retired = new ArrayList<>();
  private TransportException failure;
  private boolean faultedByPeer;
  private boolean released;
  /** Work whose futures fail once the queue pair is destroyed; guarded by this. */
  private final List<Outstanding> awaitingDestroy = new ArrayList<>();

  RdmaQueuePair(RdmaNode node, RdmaCmId id, IbvQP qp, String peer, Sizes sizes,
      CompletionQueues.Reservation reservation, ProtectionDomain domain) throws IOException {
    this.node = node;
    this.id = id;
    this.qp = qp;
    this.peer = peer;
    this.reservation = reservation;
    this.domain = domain;
    this.sendQueue = new SendQueue(sizes.sendQueue());
    ReadChain chain = new ReadChain(sizes.reads());
    this.reads = new ReadPath(this, node::nextSlot, sendQueue, chain, (first, count) -> chain.post(qp, first, count));
    this.messages = new MessagePath(this, node, qp, sendQueue, sizes.sends(), sizes.receives());
    for (WorkRequest slot : reads.slots()) {
      node.track(slot);
    }
  }

  /** The protection domain this queue pair lives in; memory its work requests name must be registered there. */
  public ProtectionDomain domain() {
    return domain;
  }

  /** The device's view of this queue pair now (state and limits). */
  public QueuePairQuery.Snapshot query() throws IOException {
    return QueuePairQuery.query(qp);
  }

  /**
   * Whether the queue pair was already in the error state, without this side having failed
   * it, when its connection ended: the device found a fault in what the peer sent (on a
   * queue pair that only serves READs, a READ outside what the peer may read). A plain
   * disconnect by the peer leaves it false.
   */
  public synchronized boolean faultedByPeer() {
    return faultedByPeer;
  }

  /** The peer this queue pair is connected to, for messages. */
  public String peer() {
    return peer;
  }

  /** False once failed or closed. */
  public synchronized boolean isOpen() {
    return failure == null;
  }

  /**
   * Calls {@code listener} once with the cause when the queue pair fails or closes (at once,
   * on this thread, if it already has). Listeners run without the queue pair's lock held.
   */
  public void onFailure(Consumer<TransportException> listener) {
    TransportException already;
    synchronized (this) {
      already = failure;
      if (already == null) {
        failureListeners.add(listener);
      }
    }
    if (already != null) {
      listener.accept(already);
    }
  }

  /**
   * Runs {@code hook} once the queue pair is destroyed (at once, on this thread, if it is
   * already): from then on the device touches none of the memory its work requests named, so
   * the hook may free it. Hooks run without the queue pair's lock held, on the thread that
   * destroys it (the node's timer); a hook that throws is logged.
   */
  public void onDestroyed(Runnable hook) {
    synchronized (this) {
      if (!released) {
        destroyHooks.add(hook);
        return;
      }
    }
    runHook(hook);
  }

  private void runHook(Runnable hook) {
    try {
      hook.run();
    } catch (RuntimeException e) {
      LOG.warn("a clean-up after destroying the queue pair to {} failed", peer, e);
    }
  }

  /**
   * Issues the READs in one post (those that do not fit wait in order); returns one future
   * per READ, in order. Each completes normally once its bytes are in local memory, or
   * exceptionally with a {@link TransportException}: {@link
   * io.sluice.transport.RegionRevokedException} when the peer's device refused it, {@link
   * TransportTimeoutException} after the read timeout, {@link PeerClosedException} when the
   * connection is gone.
   */
  public List<CompletableFuture<Void>> readBatch(List<RdmaRead> batch) {
    List<CompletableFuture<Void>> futures = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) {
      futures.add(node.newFuture());
    }
    long deadline = System.nanoTime() + node.readTimeoutNanos();
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        PeerClosedException finished = finishedException();
        futures.forEach(f -> f.completeExceptionally(finished));
        return futures;
      }
      for (int i = 0; i < batch.size(); i++) {
        reads.submit(batch.get(i), futures.get(i), deadline);
      }
      try {
        reads.post();
      } catch (IOException e) {
        failed = markFailed(new TransportException("posting READs to " + peer + " failed", e));
      }
    }
    if (failed) {
      notifyFailure();
    }
    return futures;
  }

  /** Builds a SEND of up to {@code capacity} bytes from registered memory at {@code address}. */
  public synchronized SendSlot prepareSend(long address, int capacity, int lkey) throws IOException {
    if (failure != null) {
      throw finishedException();
    }
    return messages.prepareSend(address, capacity, lkey);
  }

  /**
   * Sends the first {@code length} bytes of a slot's buffer as one message. The future
   * completes when the device reports this SEND (if {@code signaled}) or a later signaled one
   * done: the buffer may then be reused, and the slot posted again. It fails with the queue
   * pair. A caller that posts unsignaled SENDs must signal one at the latest when it would
   * otherwise wait for buffers they hold.
   *
   * @throws IllegalStateException if the slot's SEND is still outstanding, or {@code
   *     sizes.sends()} SENDs are
   */
  public CompletableFuture<Void> send(SendSlot slot, int length, boolean signaled) {
    if (length < 0 || length > slot.capacity) {
      throw new IllegalArgumentException("a SEND of " + length + " bytes from a slot of " + slot.capacity);
    }
    CompletableFuture<Void> future;
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        return CompletableFuture.failedFuture(finishedException());
      }
      try {
        future = messages.send(slot, length, signaled);
      } catch (IOException e) {
        future = slot.entry.future;
        failed = markFailed(new TransportException("posting a SEND to " + peer + " failed", e));
      }
    }
    if (failed) {
      notifyFailure();
    }
    return future;
  }

  /**
   * Builds a receive into {@code length} bytes of registered memory; {@code receiver} is
   * told how many bytes arrived each time it is posted and filled.
   */
  public synchronized ReceiveSlot prepareReceive(long address, int length, int lkey, Receiver receiver)
      throws IOException {
    if (failure != null) {
      throw finishedException();
    }
    return messages.prepareReceive(address, length, lkey, receiver);
  }

  /**
   * Posts a prepared receive (not already posted). A failure of the queue pair reaches the
   * failure listeners instead.
   *
   * @throws IllegalStateException if it is posted already, or {@code sizes.receives()} are
   */
  public void receive(ReceiveSlot slot) {
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      try {
        messages.receive(slot);
      } catch (IOException e) {
        failed = markFailed(new TransportException("posting a receive for " + peer + " failed", e));
      }
    }
    if (failed) {
      notifyFailure();
    }
  }

  /**
   * A send-queue completion with id {@code wrId}: on success it completes every entry of its
   * kind posted up to it ({@link SendQueue}), unless the id names an earlier use of the slot;
   * a failure finishes the queue pair. The entries' slots are free for reuse before their
   * futures complete, so a callback may post at once.
   */
  void sendQueueCompleted(SendQueueEntry entry, long wrId, int status) {
    boolean failed = false;
    List<CompletableFuture<Void>> done = retired;
    synchronized (this) {
      if (failure != null) {
        return; // failed with the queue pair already (flushed work ends here)
      }
      if (status != CompletionStatus.SUCCESS) {
        failed = markFailed(CompletionStatus.toException(status, peer));
      } else if (sendQueue.retireThrough(entry, wrId, done)) {
        try {
          reads.post();
        } catch (IOException e) {
          failed = markFailed(new TransportException("posting READs to " + peer + " failed", e));
        }
      }
    }
    for (int i = 0; i < done.size(); i++) {
      done.get(i).complete(null);
    }
    done.clear();
    if (failed) {
      notifyFailure();
    }
  }

  /** A receive completion: tells the slot's receiver, or finishes the queue pair on failure. */
  void receiveCompleted(MessagePath.PostedReceive entry, int status, int byteLength) {
    synchronized (this) {
      if (failure != null || !messages.receiveRetired(entry)) {
        return; // failed with the queue pair (flushed receives end here)
      }
    }
    if (status == CompletionStatus.SUCCESS) {
      entry.receiver.received(byteLength);
    } else {
      failWith(CompletionStatus.toException(status, peer));
    }
  }

  /**
   * Called by the node's deadline sweep: if the oldest READ passed its deadline, the queue
   * pair is finished (the device may still be working on it), that READ fails with {@link
   * TransportTimeoutException} and the others with a plain {@link TransportException}, so
   * the caller may retry them elsewhere.
   */
  void checkDeadlines(long now) {
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(node.readTimeoutNanos());
      // Fails with the others, once the queue pair is destroyed and cannot land it any more.
      if (reads.expired(now, () -> new TransportTimeoutException("READ from " + peer + " did not complete within "
          + millis + " ms"))) {
        failed = markFailed(new TransportException("the queue pair to " + peer + " was given up: a READ on it did"
            + " not complete within " + millis + " ms"));
      }
    }
    if (failed) {
      notifyFailure();
    }
  }

  /** Called by the node on the CM thread for an event that ends the connection (anything but ESTABLISHED). */
  void connectionEnded(String event) {
    boolean failed;
    synchronized (this) {
      if (failure == null) {
        try {
          faultedByPeer = query().failed();
        } catch (IOException e) {
          LOG.debug("querying the queue pair to {} failed", peer, e);
        }
      }
      failed = markFailed(event.equals("RDMA_CM_EVENT_DISCONNECTED")
          ? new PeerClosedException("the peer " + peer + " disconnected")
          : new PeerClosedException("the connection to " + peer + " ended: " + event));
    }
    if (failed) {
      notifyFailure();
    }
  }

  /** Fails the queue pair unless it already failed. */
  void failWith(TransportException cause) {
    boolean failed;
    synchronized (this) {
      failed = markFailed(cause);
    }
    if (failed) {
      notifyFailure();
    }
  }

  /**
   * Finishes the queue pair: disconnects first (the QP enters the error state, so nothing
   * more lands in local memory). Holds this. Returns true if this call failed it; the caller
   * then calls {@link #notifyFailure} once it released this.
   */
  private boolean markFailed(TransportException cause) {
    if (failure != null) {
      return false;
    }
    failure = cause;
    try {
      int rc = id.disconnect();
      if (rc < 0) {
        // The queue pair may still be working: outstanding futures wait for its destruction anyway.
        LOG.debug("rdma_disconnect from {} failed with errno {}", peer, -rc);
      }
    } catch (IOException e) {
      LOG.debug("rdma_disconnect from {} failed", peer, e);
    }
    node.release(this);
    return true;
  }

  /** Fails what was outstanding and tells the listeners; never called while holding this. */
  private void notifyFailure() {
    List<Outstanding> outstanding = new ArrayList<>();
    List<Consumer<TransportException>> listeners;
    TransportException cause;
    synchronized (this) {
      cause = failure;
      sendQueue.drainTo(outstanding);
      reads.drainWaiting(outstanding);
      listeners = new ArrayList<>(failureListeners);
      failureListeners.clear();
    }
    boolean destroyed;
    synchronized (this) {
      destroyed = released;
      if (!destroyed) {
        awaitingDestroy.addAll(outstanding);
      }
    }
    if (destroyed) {
      failOutstanding(outstanding, cause);
    }
    for (Consumer<TransportException> listener : listeners) {
      try {
        listener.accept(cause);
      } catch (RuntimeException e) {
        LOG.warn("a failure listener of the queue pair to {} failed", peer, e);
      }
    }
  }

  private PeerClosedException finishedException() {
    return new PeerClosedException("the queue pair to " + peer + " is finished: " + failure.getMessage(), failure);
  }

  RdmaCmId cmId() {
    return id;
  }

  /** DiSNI's queue pair, for posting work this class does not model (lab checks). */
  IbvQP ibvQp() {
    return qp;
  }

  /** Whether the queue pair and its id were destroyed. */
  synchronized boolean isDestroyed() {
    return released;
  }

  /** Disconnects, fails what is outstanding with PeerClosedException, frees the QP. */
  @Override
  public void close() {
    failWith(new PeerClosedException("the queue pair to " + peer + " was closed"));
  }

  /**
   * Destroys the QP and the id, gives back its domain reference, fails the work that was
   * outstanding and runs the {@link #onDestroyed} hooks; its completion entries return once
   * its completion queue was drained. Called by the node once, after failing.
   */
  void destroy() {
    List<Outstanding> outstanding;
    List<Runnable> hooks;
    TransportException cause;
    synchronized (this) {
      if (released) {
        return;
      }
      released = true;
      try {
        int rc = id.destroyQP();
        if (rc < 0) {
          LOG.error("destroying the queue pair to {} failed with errno {}", peer, -rc);
        }
        node.destroyId(id);
      } catch (IOException e) {
        LOG.warn("destroying the queue pair to {} failed", peer, e);
      }
      // The device touches none of the slots any more: stop routing to them and free them.
      for (WorkRequest slot : reads.slots()) {
        node.untrack(slot);
      }
      messages.built().forEach(node::untrack);
      reads.close();
      messages.close();
      outstanding = new ArrayList<>(awaitingDestroy);
      awaitingDestroy.clear();
      hooks = new ArrayList<>(destroyHooks);
      destroyHooks.clear();
      cause = failure;
    }
    // Its flushed completions may still wait in the queue: the entries return once they are taken.
    reservation.poller().afterDrain(() -> node.returnCompletions(reservation));
    domain.release();
    failOutstanding(outstanding, cause);
    hooks.forEach(this::runHook);
  }

  private static void failOutstanding(List<Outstanding> outstanding, TransportException cause) {
    for (Outstanding work : outstanding) {
      work.fail(cause);
    }
  }
}
