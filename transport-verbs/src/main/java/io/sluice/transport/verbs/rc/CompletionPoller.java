package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One completion queue of a node and the thread that drains it: waits for completion
 * events (in slices of {@value #WAIT_SLICE_MS} ms so it notices {@link #close}), polls
 * every completion and hands each to the {@link Handler} on this thread.
 *
 * <p>Thread safety: {@link #cq()} may be used from any thread to create queue pairs;
 * {@link #close()} once, after every queue pair on the CQ is destroyed.
 */
final class CompletionPoller implements AutoCloseable {

  /** Receives each completion on the poller thread; must not block. */
  interface Handler {
    /** {@code byteLength} is what a receive got; meaningful only for successful receives. */
    void completed(long wrId, int status, int byteLength);
  }

  private static final Logger LOG = LoggerFactory.getLogger(CompletionPoller.class);
  private static final int WAIT_SLICE_MS = 100;
  private static final int BATCH = 32;

  private final IbvCompChannel channel;
  private final IbvCQ cq;
  private final Handler handler;
  private final IbvWC[] completions = new IbvWC[BATCH];
  private final SVCPollCq poll;
  private final SVCReqNotify arm;
  private final Thread thread;
  private volatile boolean running = true;

  private final int entries;
  /** CQ entries promised to queue pairs; guarded by the owning {@link CompletionQueues}. */
  int reserved;

  CompletionPoller(IbvContext context, int entries, Handler handler, String name) throws IOException {
    this.handler = handler;
    this.entries = entries;
    this.channel = context.createCompChannel();
    this.cq = context.createCQ(channel, entries, 0);
    for (int i = 0; i < BATCH; i++) {
      completions[i] = new IbvWC();
    }
    this.poll = cq.poll(completions, BATCH);
    this.arm = cq.reqNotification(false);
    this.thread = new Thread(this::loop, name);
    thread.setDaemon(true);
    thread.start();
  }

  IbvCQ cq() {
    return cq;
  }

  int entries() {
    return entries;
  }

  private void loop() {
    try {
      while (running) {
        arm.execute();
        drain(); // completions that arrived before the CQ was armed raise no event
        if (channel.getCqEvent(cq, WAIT_SLICE_MS)) {
          cq.ackEvents(1);
        }
        drain();
      }
    } catch (IOException | RuntimeException e) {
      if (running) {
        LOG.error("completion queue failed; READs on this node will time out", e);
      }
    }
  }

  private void drain() throws IOException {
    int polled;
    do {
      polled = poll.execute().getPolls();
      for (int i = 0; i < polled; i++) {
        IbvWC wc = completions[i];
        handler.completed(wc.getWr_id(), wc.getStatus(), wc.getByte_len());
      }
    } while (polled == BATCH);
  }

  /** Stops the thread (within about one wait slice) and destroys the CQ and its channel. */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      LOG.warn("completion thread did not stop; leaving its CQ in place");
      return;
    }
    poll.free();
    arm.free();
    try {
      cq.destroyCQ();
      channel.destroyCompChannel();
    } catch (IOException e) {
      LOG.warn("destroying the completion queue failed", e);
    }
  }
}
