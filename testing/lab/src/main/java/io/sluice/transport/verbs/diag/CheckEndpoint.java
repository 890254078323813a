package io.sluice.transport.verbs.diag;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A DiSNI endpoint for {@link ReadCheck}: one control message buffer each way, completions
 * handed from DiSNI's completion thread to the check's thread through a queue.
 *
 * <p>Thread safety: {@link #dispatchCqEvent} runs on DiSNI's completion thread; all other
 * methods are called by the one thread that drives the check.
 */
final class CheckEndpoint extends RdmaActiveEndpoint {

  static final int CONTROL_BYTES = 32;
  private static final long RECV_WR_ID = 1;
  private static final int LOCAL_WRITE = 1; // IBV_ACCESS_LOCAL_WRITE
  private static final int REMOTE_READ = 4; // IBV_ACCESS_REMOTE_READ

  /** A completion copied out of DiSNI's reused IbvWC object. */
  record Completion(long wrId, int opcode, int status, int byteLength) {}

  private final BlockingQueue<Completion> completions = new LinkedBlockingQueue<>();
  private final ByteBuffer sendBuffer = ByteBuffer.allocateDirect(CONTROL_BYTES);
  private final ByteBuffer recvBuffer = ByteBuffer.allocateDirect(CONTROL_BYTES);
  private IbvMr sendMr;
  private IbvMr recvMr;

  CheckEndpoint(RdmaActiveEndpointGroup<CheckEndpoint> group, RdmaCmId id, boolean serverSide)
      throws IOException {
    super(group, id, serverSide);
  }

  /** Called by DiSNI once the queue pair exists: register control buffers, post a receive. */
  @Override
  protected synchronized void init() throws IOException {
    super.init();
    sendMr = register(sendBuffer);
    recvMr = register(recvBuffer);
    postReceive();
  }

  @Override
  public void dispatchCqEvent(IbvWC wc) {
    completions.add(new Completion(wc.getWr_id(), wc.getOpcode(), wc.getStatus(), wc.getByte_len()));
  }

  /**
   * Registers for local writes (receives, READ destinations) and remote READs, never remote
   * writes (DiSNI's {@code registerMemory} would grant those too).
   */
  IbvMr register(ByteBuffer buffer) throws IOException {
    return getPd().regMr(buffer, LOCAL_WRITE | REMOTE_READ).execute().free().getMr();
  }

  private void postReceive() throws IOException {
    IbvSge sge = new IbvSge();
    sge.setAddr(recvMr.getAddr());
    sge.setLength(recvMr.getLength());
    sge.setLkey(recvMr.getLkey());
    LinkedList<IbvSge> sges = new LinkedList<>();
    sges.add(sge);
    IbvRecvWR wr = new IbvRecvWR();
    wr.setWr_id(RECV_WR_ID);
    wr.setSg_list(sges);
    wr.setNum_sge(sges.size());
    postRecv(List.of(wr)).execute().free();
  }

  /** Sends {@code message} as one signaled SEND. */
  void sendControl(long wrId, ControlMessage message) throws IOException {
    sendBuffer.clear();
    message.writeTo(sendBuffer);
    IbvSge sge = new IbvSge();
    sge.setAddr(sendMr.getAddr());
    sge.setLength(CONTROL_BYTES);
    sge.setLkey(sendMr.getLkey());
    LinkedList<IbvSge> sges = new LinkedList<>();
    sges.add(sge);
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(wrId);
    wr.setOpcode(IbvSendWR.IBV_WR_SEND);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.setSg_list(sges);
    postSend(List.of(wr)).execute().free();
  }

  /** The last received control message; call after its receive completion. */
  ControlMessage receivedControl() {
    ByteBuffer copy = recvBuffer.duplicate();
    copy.clear();
    return ControlMessage.readFrom(copy);
  }

  /** Posts the given work requests in one call (one post, many requests). */
  void post(List<IbvSendWR> requests) throws IOException {
    postSend(requests).execute().free();
  }

  /**
   * Waits for the next completion and checks it succeeded with the expected opcode.
   *
   * @throws IOException on failure, on an unexpected completion, or when none arrives
   *     before the deadline
   */
  Completion await(int expectedOpcode, long deadlineNanos) throws IOException {
    Completion completion = next(deadlineNanos);
    if (completion.status() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
      throw new IOException("completion failed: " + completion);
    }
    if (completion.opcode() != expectedOpcode) {
      throw new IOException("expected opcode " + expectedOpcode + ", got " + completion);
    }
    return completion;
  }

  /**
   * Waits for the next completion, successful or not.
   *
   * @throws IOException when none arrives before the deadline
   */
  Completion next(long deadlineNanos) throws IOException {
    long remaining = deadlineNanos - System.nanoTime();
    try {
      Completion completion = completions.poll(Math.max(0, remaining), TimeUnit.NANOSECONDS);
      if (completion == null) {
        throw new IOException("no completion before the deadline");
      }
      return completion;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for a completion", e);
    }
  }
}
