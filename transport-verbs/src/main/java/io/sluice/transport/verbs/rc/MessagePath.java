package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.StatefulVerbCall;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The two-sided side of one queue pair: SEND slots and receive slots, each built once with
 * DiSNI's stateful verb calls and its own work request id, and posted again with only the
 * length and flags changed. At most {@code sends} SENDs outstanding and {@code receives}
 * receives posted.
 *
 * <p>Guarded by the lock of the owning {@link RdmaQueuePair}; created and closed by it.
 */
final class MessagePath implements AutoCloseable {

  /**
   * A receive slot's work request, posted ahead of the message that will fill it. Its id is
   * the bare slot number (DiSNI's receive call cannot change the id once built): the receive
   * queue completes in order on every device, and a receive is posted again only after its
   * completion was handled, so no completion of an earlier use can follow.
   */
  static final class PostedReceive implements WorkRequest {
    private final RdmaQueuePair owner;
    private final long slot;
    final RdmaQueuePair.Receiver receiver;
    boolean posted;

    PostedReceive(RdmaQueuePair owner, long slot, RdmaQueuePair.Receiver receiver) {
      this.owner = owner;
      this.slot = slot;
      this.receiver = receiver;
    }

    @Override
    public long slot() {
      return slot;
    }

    @Override
    public RdmaQueuePair owner() {
      return owner;
    }

    @Override
    public void completed(long wrId, int status, int byteLength) {
      owner.receiveCompleted(this, status, byteLength);
    }
  }

  private final RdmaQueuePair owner;
  private final RdmaNode node;
  private final IbvQP qp;
  private final SendQueue sendQueue;
  private final int maxSends;
  private final int maxReceives;
  private final List<StatefulVerbCall<?>> calls = new ArrayList<>();
  private final List<WorkRequest> built = new ArrayList<>();
  private int sendsPosted;
  private int receivesPosted;

  MessagePath(RdmaQueuePair owner, RdmaNode node, IbvQP qp, SendQueue sendQueue, int maxSends, int maxReceives) {
    this.owner = owner;
    this.node = node;
    this.qp = qp;
    this.sendQueue = sendQueue;
    this.maxSends = maxSends;
    this.maxReceives = maxReceives;
  }

  /** Builds a SEND slot; holds the lock. */
  SendSlot prepareSend(long address, int capacity, int lkey) throws IOException {
    SendSlot.Entry entry = new SendSlot.Entry(owner, this, node.nextSlot());
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(entry.postedWrId());
    wr.setOpcode(IbvSendWR.IBV_WR_SEND);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.setSg_list(scatterGather(address, capacity, lkey));
    SVCPostSend call = qp.postSend(List.of(wr), null);
    calls.add(call);
    built.add(entry);
    node.track(entry);
    return new SendSlot(call, capacity, entry);
  }

  /**
   * Posts a slot's SEND of {@code length} bytes; holds the lock.
   *
   * @throws IllegalStateException if the slot's last SEND is outstanding or all SENDs are
   * @throws IOException if posting failed (the SEND stays outstanding; the queue pair fails)
   */
  CompletableFuture<Void> send(SendSlot slot, int length, boolean signaled) throws IOException {
    if (slot.entry.posted) {
      throw new IllegalStateException("a SEND slot posted again before its SEND completed, to " + owner.peer());
    }
    if (sendsPosted >= maxSends) {
      throw new IllegalStateException("more than " + maxSends + " SENDs outstanding to " + owner.peer());
    }
    CompletableFuture<Void> future = new CompletableFuture<>();
    SVCPostSend.SendWRMod wr = slot.call.getWrMod(0);
    wr.setSend_flags(signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0);
    wr.getSgeMod(0).setLength(length);
    slot.entry.future = future;
    wr.setWr_id(sendQueue.add(slot.entry));
    sendsPosted++;
    slot.call.execute();
    return future;
  }

  void sendRetired() {
    sendsPosted--;
  }

  /** Builds a receive slot; holds the lock. */
  ReceiveSlot prepareReceive(long address, int length, int lkey, RdmaQueuePair.Receiver receiver) throws IOException {
    PostedReceive entry = new PostedReceive(owner, node.nextSlot(), receiver);
    IbvRecvWR wr = new IbvRecvWR();
    wr.setWr_id(WorkRequestIds.of(entry.slot(), 0));
    wr.setSg_list(scatterGather(address, length, lkey));
    wr.setNum_sge(1);
    SVCPostRecv call = qp.postRecv(List.of(wr), null);
    calls.add(call);
    built.add(entry);
    node.track(entry);
    return new ReceiveSlot(call, entry);
  }

  /**
   * Posts a receive slot; holds the lock.
   *
   * @throws IllegalStateException if it is posted already, or all receives are
   * @throws IOException if posting failed (the queue pair fails)
   */
  void receive(ReceiveSlot slot) throws IOException {
    if (slot.entry.posted) {
      throw new IllegalStateException("a receive posted twice for " + owner.peer());
    }
    if (receivesPosted >= maxReceives) {
      throw new IllegalStateException("more than " + maxReceives + " receives posted for " + owner.peer());
    }
    slot.entry.posted = true;
    receivesPosted++;
    slot.call.execute();
  }

  /** A receive completed: its slot may be posted again. Holds the lock; false if it was not posted. */
  boolean receiveRetired(PostedReceive entry) {
    if (!entry.posted) {
      return false;
    }
    entry.posted = false;
    receivesPosted--;
    return true;
  }

  /** The slots' work requests, to stop routing completions to once the queue pair is destroyed. */
  List<WorkRequest> built() {
    return built;
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

  /** Frees the built calls; after the queue pair is destroyed. */
  @Override
  public void close() {
    calls.forEach(StatefulVerbCall::free);
    calls.clear();
  }
}
