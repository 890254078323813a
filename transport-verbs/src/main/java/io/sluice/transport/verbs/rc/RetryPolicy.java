package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.RdmaCmId;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long a queue pair's device keeps resending work the peer does not answer before it
 * fails it (IBV_WC_RETRY_EXC_ERR), set on both ends of every connection: {@value
 * #RETRY_COUNT} retries after a local ACK timeout of 4.096 us x 2^{@value
 * #ACK_TIMEOUT_EXPONENT} (about 67 ms), so the device gives up within {@link #giveUpNanos()}
 * (under 2 s), well inside the READ deadline. The deadline is then only the backstop for a
 * device that never answers, and a READ the peer stopped answering fails with its cause.
 *
 * <p>Why not 7 retries: only the RNR retry count gives 7 the meaning "without limit" in the
 * InfiniBand specification, but SoftRoCE (rxe) treats a retry count of 7 as unlimited too, and
 * Linux 6.1's rxe drops a NAK that arrives in the middle of a multi-packet READ reply (fixed
 * in 6.2 by 5ac814e02ece, "RDMA/rxe: Handle remote errors in the midst of a Read reply
 * sequence"): the READ of a region deregistered under it was resent forever and ran into the
 * READ deadline. Why set the ACK timeout: rdma_cm's default on RoCE is derived from the
 * packet lifetime (18 on 6.1: about 2.1 s per try), so even 7 finite tries took about 15 s.
 * iWARP runs over TCP and ignores both values.
 *
 * <p>Pure Java but for {@link #applyAckTimeout} ({@link CmOptions}). Stateless; thread safe.
 */
public final class RetryPolicy {

  /** Resends of unanswered work before the device fails it; 7 would mean "without limit" on rxe. */
  static final int RETRY_COUNT = 6;
  /** 7 means "retry without limit": a peer short of receive buffers slows a sender down, never fails it. */
  static final int RNR_RETRY_COUNT = 7;
  /** The local ACK timeout is 4.096 us x 2^this: about 67 ms. */
  static final int ACK_TIMEOUT_EXPONENT = 14;

  private static final Logger LOG = LoggerFactory.getLogger(RetryPolicy.class);
  private static final AtomicBoolean WARNED = new AtomicBoolean();

  private RetryPolicy() {}

  /**
   * The longest a device following the policy resends unanswered work before it fails it:
   * every try waits up to the ACK timeout, which the InfiniBand specification lets a device
   * stretch up to four times (rxe waits exactly once the timeout).
   */
  public static long giveUpNanos() {
    return (RETRY_COUNT + 1) * 4L * ackTimeoutNanos();
  }

  /** One local ACK timeout: 4.096 us x 2^{@value #ACK_TIMEOUT_EXPONENT}. */
  static long ackTimeoutNanos() {
    return 4096L << ACK_TIMEOUT_EXPONENT;
  }

  /** Whether a READ deadline leaves the device time to fail unanswered READs with their cause first. */
  public static boolean deadlineCoversRetries(long readTimeoutNanos) {
    return readTimeoutNanos > giveUpNanos();
  }

  /**
   * Sets the ACK timeout on {@code id} before it connects or accepts. A kernel or library that
   * does not support it is logged (once per process) and left with its default.
   */
  static void applyAckTimeout(RdmaCmId id) {
    int errno = CmOptions.setAckTimeout(id, ACK_TIMEOUT_EXPONENT);
    if (errno == 0) {
      return;
    }
    String what = "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT, " + ACK_TIMEOUT_EXPONENT + ") failed with errno "
        + errno + "; queue pairs keep rdma_cm's default ACK timeout (on RoCE about 2 s per retry), so a READ"
        + " the peer stops answering may run into the READ deadline";
    if (WARNED.compareAndSet(false, true)) {
      LOG.warn(what);
    } else {
      LOG.debug(what);
    }
  }

  /** Log line of the policy, for the node's start-up message. */
  static String describe() {
    return "retry " + RETRY_COUNT + ", RNR retry " + RNR_RETRY_COUNT + " (unlimited), ACK timeout "
        + TimeUnit.NANOSECONDS.toMicros(ackTimeoutNanos()) + " us";
  }
}
