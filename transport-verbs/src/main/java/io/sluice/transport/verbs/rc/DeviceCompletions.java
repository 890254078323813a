package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import java.io.IOException;

/**
 * A device completion queue with its own completion channel, polled and armed through DiSNI
 * calls built once. Thread safety as {@link CompletionSource} says.
 */
final class DeviceCompletions implements CompletionSource {
  private static final int BATCH = 32;

  private final IbvCompChannel channel;
  private final IbvCQ cq;
  private final IbvWC[] completions = new IbvWC[BATCH];
  private final SVCPollCq poll;
  private final SVCReqNotify arm;

  DeviceCompletions(IbvContext context, int entries) throws IOException {
    this.channel = context.createCompChannel();
    this.cq = context.createCQ(channel, entries, 0);
    for (int i = 0; i < BATCH; i++) {
      completions[i] = new IbvWC();
    }
    this.poll = cq.poll(completions, BATCH);
    this.arm = cq.reqNotification(false);
  }

  IbvCQ cq() {
    return cq;
  }

  @Override
  public int poll(CompletionPoller.Handler handler) throws IOException {
    int polled = poll.execute().getPolls();
    if (polled < 0) {
      throw new IOException("ibv_poll_cq failed with " + polled);
    }
    for (int i = 0; i < polled; i++) {
      IbvWC wc = completions[i];
      handler.completed(wc.getWr_id(), wc.getStatus(), wc.getByte_len());
    }
    return polled;
  }

  @Override
  public int batch() {
    return BATCH;
  }

  @Override
  public void arm() throws IOException {
    arm.execute();
  }

  @Override
  public boolean await(int millis) throws IOException {
    if (channel.getCqEvent(cq, millis)) {
      cq.ackEvents(1);
      return true;
    }
    return false;
  }

  @Override
  public void close() throws IOException {
    poll.free();
    arm.free();
    cq.destroyCQ();
    channel.destroyCompChannel();
  }
}
