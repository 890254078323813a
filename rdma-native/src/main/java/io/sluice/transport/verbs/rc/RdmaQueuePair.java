package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmId;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reliable-connected queue pair opened by {@link RdmaNode#prepare}: issues READs from
 * the peer's registered memory, at most {@code maxInFlight} at a time (the rest wait in
 * order), each signaled and bounded by the read timeout.
 *
 * <p>A queue pair that sees one failed completion, a timeout or the peer's disconnect is
 * finished: the device moves it to the error state, so it disconnects, fails everything
 * outstanding and every later READ, and the caller opens a new one. It disconnects before
 * failing the futures, so a READ that failed never writes its destination afterwards.
 *
 * <p>Thread safe: READs may be issued from any thread; completions arrive on the node's
 * completion thread.
 */
public final class RdmaQueuePair implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RdmaQueuePair.class);

  private final RdmaNode node;
  private final RdmaCmId id;
  private final IbvQP qp;
  private final String peer;
  private final int maxInFlight;

  /** Guarded by this. */
  private final ArrayDeque<PendingRead> waiting = new ArrayDeque<>();
  private final List<PendingRead> inFlight = new ArrayList<>();
  private TransportException failure;
  private boolean released;

  /** A READ between submission and completion. */
  final class PendingRead {
    final long wrId;
    final RdmaRead read;
    final CompletableFuture<Void> future = new CompletableFuture<>();
    ScheduledFuture<?> timeout;

    PendingRead(long wrId, RdmaRead read) {
      this.wrId = wrId;
      this.read = read;
    }

    RdmaQueuePair queuePair() {
      return RdmaQueuePair.this;
    }
  }

  RdmaQueuePair(RdmaNode node, RdmaCmId id, IbvQP qp, String peer, int maxInFlight) {
    this.node = node;
    this.id = id;
    this.qp = qp;
    this.peer = peer;
    this.maxInFlight = maxInFlight;
  }

  /** The peer this queue pair reads from, for messages. */
  public String peer() {
    return peer;
  }

  /** False once failed or closed. */
  public synchronized boolean isOpen() {
    return failure == null;
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
    List<PendingRead> failed;
    synchronized (this) {
      for (RdmaRead read : reads) {
        PendingRead pending = new PendingRead(node.nextWrId(), read);
        futures.add(pending.future);
        if (failure != null) {
          pending.future.completeExceptionally(
              new PeerClosedException("the queue pair to " + peer + " is finished: " + failure.getMessage(), failure));
          continue;
        }
        pending.timeout = node.schedule(() -> timedOut(pending), node.readTimeoutNanos());
        waiting.add(pending);
      }
      failed = pump();
    }
    notifyFailed(failed);
    return futures;
  }

  /**
   * Posts waiting READs while there is room; one post for all that fit. Holds this.
   * Returns the READs to fail (after releasing the lock) if posting failed.
   */
  private List<PendingRead> pump() {
    if (failure != null || waiting.isEmpty() || inFlight.size() >= maxInFlight) {
      return List.of();
    }
    List<IbvSendWR> requests = new ArrayList<>();
    List<PendingRead> posted = new ArrayList<>();
    while (!waiting.isEmpty() && inFlight.size() + posted.size() < maxInFlight) {
      PendingRead pending = waiting.poll();
      requests.add(request(pending));
      posted.add(pending);
    }
    posted.forEach(node::track);
    inFlight.addAll(posted);
    try {
      qp.postSend(requests, null).execute().free();
      return List.of();
    } catch (IOException e) {
      return fail(new TransportException("posting READs to " + peer + " failed", e));
    }
  }

  private static IbvSendWR request(PendingRead pending) {
    RdmaRead read = pending.read;
    IbvSge sge = new IbvSge();
    sge.setAddr(read.localAddress());
    sge.setLength(read.length());
    sge.setLkey(read.lkey());
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(pending.wrId);
    wr.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.getRdma().setRemote_addr(read.remoteAddress());
    wr.getRdma().setRkey(read.rkey());
    LinkedList<IbvSge> sges = new LinkedList<>();
    sges.add(sge);
    wr.setSg_list(sges);
    return wr;
  }

  /** Called on the completion thread for a READ of this queue pair. */
  void completed(PendingRead pending, int status) {
    List<PendingRead> failed;
    synchronized (this) {
      if (!inFlight.remove(pending)) {
        return; // already failed with the queue pair
      }
      pending.timeout.cancel(false);
      if (status != CompletionStatus.SUCCESS) {
        inFlight.add(pending); // fail() completes it with the others
        failed = fail(CompletionStatus.toException(status, peer));
      } else {
        failed = pump();
      }
    }
    if (status == CompletionStatus.SUCCESS) {
      pending.future.complete(null);
    }
    notifyFailed(failed);
  }

  private void timedOut(PendingRead pending) {
    failWith(new TransportTimeoutException("READ from " + peer + " did not complete within "
        + TimeUnit.NANOSECONDS.toMillis(node.readTimeoutNanos()) + " ms"), pending);
  }

  /** Called by the node when the peer disconnected. */
  void peerDisconnected() {
    failWith(new PeerClosedException("the peer " + peer + " disconnected"), null);
  }

  /** Fails the queue pair unless it already failed (or {@code onlyIfPending} is done). */
  private void failWith(TransportException cause, PendingRead onlyIfPending) {
    List<PendingRead> failed;
    synchronized (this) {
      if (onlyIfPending != null && onlyIfPending.future.isDone()) {
        return;
      }
      failed = fail(cause);
    }
    notifyFailed(failed);
  }

  /** Completes failed READs; never called while holding this, so callbacks cannot deadlock. */
  private void notifyFailed(List<PendingRead> failed) {
    for (PendingRead pending : failed) {
      pending.future.completeExceptionally(failure());
    }
  }

  private synchronized TransportException failure() {
    return failure;
  }

  /**
   * Finishes the queue pair: disconnects first (the QP enters the error state, so nothing
   * more lands in local memory) and returns every outstanding READ for the caller to fail
   * once it released this. Holds this.
   */
  private List<PendingRead> fail(TransportException cause) {
    if (failure != null) {
      return List.of();
    }
    failure = cause;
    try {
      id.disconnect();
    } catch (IOException e) {
      LOG.debug("disconnect from {} failed", peer, e);
    }
    List<PendingRead> outstanding = new ArrayList<>(inFlight);
    outstanding.addAll(waiting);
    inFlight.clear();
    waiting.clear();
    for (PendingRead pending : outstanding) {
      node.untrack(pending);
      if (pending.timeout != null) {
        pending.timeout.cancel(false);
      }
    }
    node.release(this);
    return outstanding;
  }

  /** Disconnects, fails what is outstanding with PeerClosedException, frees the QP. */
  @Override
  public void close() {
    failWith(new PeerClosedException("the queue pair to " + peer + " was closed"), null);
  }

  /** Destroys the QP and the id; called by the node once, after {@link #fail}. */
  synchronized void destroy() {
    if (released) {
      return;
    }
    released = true;
    try {
      id.destroyQP();
      id.destroyId();
    } catch (IOException e) {
      LOG.warn("destroying the queue pair to {} failed", peer, e);
    }
  }
}
