package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.StatefulVerbCall;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reliable-connected queue pair, opened by {@link RdmaNode#prepare} or accepted from an
 * admitted peer. It issues READs from the peer's registered memory, at most {@code
 * sizes.reads()} at a time (the rest wait in order), each bounded by the read timeout; and it
 * carries two-sided messages: SENDs (at most {@code sizes.sends()} outstanding) and receives
 * posted ahead into registered buffers (at most {@code sizes.receives()}).
 *
 * <p>Signaling: the send queue completes in order, so only the last READ of each post and
 * the SENDs the caller asks for are signaled; a signaled completion completes everything
 * posted before it. A failed work request reports itself whether signaled or not.
 *
 * <p>A queue pair that sees one failed completion, a timeout or any rdma_cm event but
 * ESTABLISHED is finished: it disconnects (the device moves it to the error state), tells its
 * failure listeners at once, and the caller opens a new one. The futures of work that was
 * outstanding fail only once the queue pair is destroyed: after ibv_destroy_qp returns the
 * device no longer touches its buffers, so a READ that failed never lands in a destination
 * the caller has reused, even if the disconnect itself failed.
 *
 * <p>A queue pair lives in one {@link ProtectionDomain} and holds a reference to it until it
 * is destroyed. {@link #faultedByPeer()} tells whether the peer broke it (see there).
 *
 * <p>Thread safe: work may be posted from any thread; completions arrive on a completion
 * thread of the node, and futures complete there (callbacks must not block).
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

  /** Told how many bytes a posted receive got; called on a completion thread, must not block. */
  public interface Receiver {
    void received(int byteLength);
  }

  /**
   * A SEND of one registered buffer, built once ({@link #prepareSend}) and posted many times
   * with {@link #send(SendSlot, int, boolean)}: only the length, id and flags change.
   */
  public static final class SendSlot {
    private final SVCPostSend call;
    private final int capacity;

    private SendSlot(SVCPostSend call, int capacity) {
      this.call = call;
      this.capacity = capacity;
    }
  }

  /**
   * A receive into one registered buffer, built once ({@link #prepareReceive}) and posted
   * again each time its message has been taken out ({@link #receive(ReceiveSlot)}).
   */
  public static final class ReceiveSlot {
    private final SVCPostRecv call;
    private final WorkRequest pending;

    private ReceiveSlot(SVCPostRecv call, WorkRequest pending) {
      this.call = call;
      this.pending = pending;
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(RdmaQueuePair.class);

  private final RdmaNode node;
  private final RdmaCmId id;
  private final IbvQP qp;
  private final String peer;
  private final Sizes sizes;
  private final CompletionQueues.Reservation reservation;
  private final ProtectionDomain domain;

  /** Guarded by this. */
  private final ArrayDeque<PendingRead> waiting = new ArrayDeque<>();
  private final ArrayDeque<SendQueueEntry> sendQueue = new ArrayDeque<>();
  private final Set<PostedReceive> receives = new HashSet<>();
  private final List<Consumer<TransportException>> failureListeners = new ArrayList<>();
  private final List<StatefulVerbCall<?>> preparedCalls = new ArrayList<>();
  private int readsPosted;
  private int sendsPosted;
  private TransportException failure;
  private boolean faultedByPeer;
  private boolean released;
  /** Work whose futures fail once the queue pair is destroyed; guarded by this. */
  private final List<SendQueueEntry> awaitingDestroy = new ArrayList<>();

  /** A work request on the send queue (READ or SEND), completed in posting order. */
  abstract class SendQueueEntry implements WorkRequest {
    final long wrId = node.nextWrId();
    final CompletableFuture<Void> future = new CompletableFuture<>();
    boolean posted;

    @Override
    public long wrId() {
      return wrId;
    }

    @Override
    public void completed(int status, int byteLength) {
      sendQueueCompleted(this, status);
    }
  }

  /** A READ between submission and completion. */
  final class PendingRead extends SendQueueEntry {
    final RdmaRead read;
    ScheduledFuture<?> timeout;
    /** Set when this READ passed its deadline: it fails with this instead of the queue pair's cause. */
    TransportTimeoutException timedOut;

    PendingRead(RdmaRead read) {
      this.read = read;
    }
  }

  /** A SEND between posting and completion. */
  final class PendingSend extends SendQueueEntry {}

  /** A receive posted ahead of the message that will fill it (its id is the slot's, reused). */
  private final class PostedReceive implements WorkRequest {
    final long wrId = node.nextWrId();
    final Receiver receiver;

    PostedReceive(Receiver receiver) {
      this.receiver = receiver;
    }

    @Override
    public long wrId() {
      return wrId;
    }

    @Override
    public void completed(int status, int byteLength) {
      synchronized (RdmaQueuePair.this) {
        if (!receives.remove(this)) {
          return; // failed with the queue pair (flushed receives end here)
        }
      }
      if (status == CompletionStatus.SUCCESS) {
        receiver.received(byteLength);
      } else {
        failWith(CompletionStatus.toException(status, peer));
      }
    }
  }

  RdmaQueuePair(RdmaNode node, RdmaCmId id, IbvQP qp, String peer, Sizes sizes,
      CompletionQueues.Reservation reservation, ProtectionDomain domain) {
    this.node = node;
    this.id = id;
    this.qp = qp;
    this.peer = peer;
    this.sizes = sizes;
    this.reservation = reservation;
    this.domain = domain;
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
   * Issues the READs; returns one future per READ, in order. Each completes normally once
   * its bytes are in local memory, or exceptionally with a {@link TransportException}:
   * {@link io.sluice.transport.RegionRevokedException} when the peer's device refused it,
   * {@link TransportTimeoutException} after the read timeout, {@link PeerClosedException}
   * when the connection is gone.
   */
  public List<CompletableFuture<Void>> readBatch(List<RdmaRead> reads) {
    List<CompletableFuture<Void>> futures = new ArrayList<>(reads.size());
    boolean failed;
    synchronized (this) {
      for (RdmaRead read : reads) {
        PendingRead pending = new PendingRead(read);
        futures.add(pending.future);
        if (failure != null) {
          pending.future.completeExceptionally(finishedException());
          continue;
        }
        pending.timeout = node.schedule(() -> timedOut(pending), node.readTimeoutNanos());
        waiting.add(pending);
      }
      failed = !pump();
    }
    if (failed) {
      notifyFailure();
    }
    return futures;
  }

  /** Builds a SEND of up to {@code capacity} bytes from registered memory at {@code address}. */
  public SendSlot prepareSend(long address, int capacity, int lkey) throws IOException {
    synchronized (this) {
      if (failure != null) {
        throw finishedException();
      }
      IbvSendWR wr = new IbvSendWR();
      wr.setOpcode(IbvSendWR.IBV_WR_SEND);
      wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
      wr.setSg_list(scatterGather(address, capacity, lkey));
      SVCPostSend call = qp.postSend(List.of(wr), null);
      preparedCalls.add(call);
      return new SendSlot(call, capacity);
    }
  }

  /**
   * Sends the first {@code length} bytes of a slot's buffer as one message. The future
   * completes when the device reports this SEND (if {@code signaled}) or a later signaled one
   * done: the buffer may then be reused. It fails with the queue pair. A caller that posts
   * unsignaled SENDs must signal one at the latest when it would otherwise wait for buffers
   * they hold.
   *
   * @throws IllegalStateException if {@code sizes.sends()} SENDs are already outstanding
   */
  public CompletableFuture<Void> send(SendSlot slot, int length, boolean signaled) {
    if (length < 0 || length > slot.capacity) {
      throw new IllegalArgumentException("a SEND of " + length + " bytes from a slot of " + slot.capacity);
    }
    PendingSend pending = new PendingSend();
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        pending.future.completeExceptionally(finishedException());
        return pending.future;
      }
      if (sendsPosted >= sizes.sends()) {
        throw new IllegalStateException("more than " + sizes.sends() + " SENDs outstanding to " + peer);
      }
      try {
        SVCPostSend.SendWRMod wr = slot.call.getWrMod(0);
        wr.setWr_id(pending.wrId);
        wr.setSend_flags(signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        wr.getSgeMod(0).setLength(length);
        enqueue(pending);
        sendsPosted++;
        slot.call.execute();
      } catch (IOException e) {
        failed = markFailed(new TransportException("posting a SEND to " + peer + " failed", e));
      }
    }
    if (failed) {
      notifyFailure();
    }
    return pending.future;
  }

  /**
   * Builds a receive into {@code length} bytes of registered memory; {@code receiver} is
   * told how many bytes arrived each time it is posted and filled.
   */
  public ReceiveSlot prepareReceive(long address, int length, int lkey, Receiver receiver) throws IOException {
    synchronized (this) {
      if (failure != null) {
        throw finishedException();
      }
      PostedReceive pending = new PostedReceive(receiver);
      IbvRecvWR wr = new IbvRecvWR();
      wr.setWr_id(pending.wrId);
      wr.setSg_list(scatterGather(address, length, lkey));
      wr.setNum_sge(1);
      SVCPostRecv call = qp.postRecv(List.of(wr), null);
      preparedCalls.add(call);
      return new ReceiveSlot(call, pending);
    }
  }

  /**
   * Posts a prepared receive (not already posted). A failure of the queue pair reaches the
   * failure listeners instead.
   *
   * @throws IllegalStateException if {@code sizes.receives()} receives are already posted
   */
  public void receive(ReceiveSlot slot) {
    PostedReceive pending = (PostedReceive) slot.pending;
    boolean failed = false;
    synchronized (this) {
      if (failure != null) {
        return;
      }
      if (receives.contains(pending)) {
        throw new IllegalStateException("a receive posted twice for " + peer);
      }
      if (receives.size() >= sizes.receives()) {
        throw new IllegalStateException("more than " + sizes.receives() + " receives posted for " + peer);
      }
      node.track(pending);
      receives.add(pending);
      try {
        slot.call.execute();
      } catch (IOException e) {
        failed = markFailed(new TransportException("posting a receive for " + peer + " failed", e));
      }
    }
    if (failed) {
      notifyFailure();
    }
  }

  private static LinkedList<IbvSge> scatterGather(long address, int length, int lkey) {
    IbvSge sge = new IbvSge();
    sge.setAddr(address);
    sge.setLength(length);
    sge.setLkey(lkey);
    LinkedList<IbvSge> sges = new LinkedList<>();
    sges.add(sge);
    return sges;
  }

  /** A one-SGE send-queue work request, queued for its completion. Holds this. */
  private IbvSendWR workRequest(SendQueueEntry entry, int opcode, long localAddress, int length, int lkey,
      boolean signaled) {
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(entry.wrId);
    wr.setOpcode(opcode);
    wr.setSend_flags(signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0);
    wr.setSg_list(scatterGather(localAddress, length, lkey));
    enqueue(entry);
    return wr;
  }

  /** Tracks a send-queue entry about to be posted. Holds this. */
  private void enqueue(SendQueueEntry entry) {
    node.track(entry);
    entry.posted = true;
    sendQueue.add(entry);
  }

  /**
   * Posts waiting READs while there is room, in one post whose last READ alone is signaled.
   * Holds this. Returns false if posting failed (the queue pair is then failed; notify after
   * unlocking).
   */
  private boolean pump() {
    if (failure != null || waiting.isEmpty() || readsPosted >= sizes.reads()) {
      return true;
    }
    List<IbvSendWR> requests = new ArrayList<>();
    while (!waiting.isEmpty() && readsPosted < sizes.reads()) {
      PendingRead pending = waiting.poll();
      RdmaRead read = pending.read;
      boolean last = waiting.isEmpty() || readsPosted + 1 == sizes.reads();
      IbvSendWR wr = workRequest(pending, IbvSendWR.IBV_WR_RDMA_READ, read.localAddress(), read.length(),
          read.lkey(), last);
      wr.getRdma().setRemote_addr(read.remoteAddress());
      wr.getRdma().setRkey(read.rkey());
      requests.add(wr);
      readsPosted++;
    }
    try {
      qp.postSend(requests, null).execute().free();
      return true;
    } catch (IOException e) {
      return !markFailed(new TransportException("posting READs to " + peer + " failed", e));
    }
  }

  /**
   * A send-queue completion: on success it completes every entry posted up to it (the send
   * queue completes in order); a failure finishes the queue pair.
   */
  private void sendQueueCompleted(SendQueueEntry entry, int status) {
    List<SendQueueEntry> done = new ArrayList<>();
    boolean failed;
    synchronized (this) {
      if (failure != null || !entry.posted) {
        return; // failed with the queue pair already
      }
      if (status != CompletionStatus.SUCCESS) {
        failed = markFailed(CompletionStatus.toException(status, peer));
      } else {
        SendQueueEntry e;
        do {
          e = sendQueue.poll();
          if (e == null) {
            break; // cannot happen: the entry was posted and is not done
          }
          e.posted = false;
          node.untrack(e);
          if (e instanceof PendingRead r) {
            readsPosted--;
            r.timeout.cancel(false);
          } else {
            sendsPosted--;
          }
          done.add(e);
        } while (e != entry);
        failed = !pump();
      }
    }
    for (SendQueueEntry e : done) {
      e.future.complete(null);
    }
    if (failed) {
      notifyFailure();
    }
  }

  /**
   * A READ passed its deadline: the queue pair is finished (the device may still be working
   * on it), that READ fails with {@link TransportTimeoutException} and the others with a
   * plain {@link TransportException}, so the caller may retry them elsewhere.
   */
  private void timedOut(PendingRead pending) {
    long millis = TimeUnit.NANOSECONDS.toMillis(node.readTimeoutNanos());
    boolean failed;
    synchronized (this) {
      if (pending.future.isDone() || failure != null) {
        return; // done, or failed with the queue pair already
      }
      // Fails with the others, once the queue pair is destroyed and cannot land it any more.
      pending.timedOut = new TransportTimeoutException("READ from " + peer + " did not complete within " + millis + " ms");
      failed = markFailed(new TransportException("the queue pair to " + peer + " was given up: a READ on it did not"
          + " complete within " + millis + " ms"));
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
  private void failWith(TransportException cause) {
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
    for (SendQueueEntry e : sendQueue) {
      if (e instanceof PendingRead r) {
        r.timeout.cancel(false);
      }
    }
    for (PendingRead pending : waiting) {
      pending.timeout.cancel(false);
    }
    node.release(this);
    return true;
  }

  /** Fails what was outstanding and tells the listeners; never called while holding this. */
  private void notifyFailure() {
    List<SendQueueEntry> outstanding;
    List<PostedReceive> posted;
    List<Consumer<TransportException>> listeners;
    TransportException cause;
    synchronized (this) {
      cause = failure;
      outstanding = new ArrayList<>(sendQueue);
      outstanding.addAll(waiting);
      sendQueue.clear();
      waiting.clear();
      posted = new ArrayList<>(receives);
      receives.clear();
      listeners = new ArrayList<>(failureListeners);
      failureListeners.clear();
    }
    posted.forEach(node::untrack);
    outstanding.forEach(node::untrack);
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
   * Destroys the QP and the id, returns its completion entries and its domain reference, and
   * then fails the work that was outstanding; called by the node once, after failing.
   */
  void destroy() {
    List<SendQueueEntry> outstanding;
    TransportException cause;
    synchronized (this) {
      if (released) {
        return;
      }
      released = true;
      preparedCalls.forEach(StatefulVerbCall::free);
      preparedCalls.clear();
      try {
        int rc = id.destroyQP();
        if (rc < 0) {
          LOG.error("destroying the queue pair to {} failed with errno {}", peer, -rc);
        }
        node.destroyId(id);
      } catch (IOException e) {
        LOG.warn("destroying the queue pair to {} failed", peer, e);
      }
      outstanding = new ArrayList<>(awaitingDestroy);
      awaitingDestroy.clear();
      cause = failure;
    }
    node.returnCompletions(reservation);
    domain.release();
    failOutstanding(outstanding, cause);
  }

  private static void failOutstanding(List<SendQueueEntry> outstanding, TransportException cause) {
    for (SendQueueEntry e : outstanding) {
      e.future.completeExceptionally(e instanceof PendingRead r && r.timedOut != null ? r.timedOut : cause);
    }
  }
}
