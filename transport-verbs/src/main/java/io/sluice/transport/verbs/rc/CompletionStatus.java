package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvWC;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;

/** Turns the status of a failed work completion into the transport's exception types. */
final class CompletionStatus {

  static final int SUCCESS = IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal();
  private static final int WR_FLUSH_ERR = IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal();
  private static final int REM_ACCESS_ERR = IbvWC.IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal();
  private static final int RETRY_EXC_ERR = IbvWC.IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal();

  private CompletionStatus() {}

  static String name(int status) {
    IbvWC.IbvWcStatus[] all = IbvWC.IbvWcStatus.values();
    return status >= 0 && status < all.length ? all[status].name() : "status " + status;
  }

  /**
   * The exception for a READ that completed with {@code status}. The device reports a
   * wrong key, a range outside the registration and a deregistered region alike as a
   * remote access error; callers check bounds before posting, so it means the region was
   * revoked (or the key was never valid).
   */
  static TransportException toException(int status, String peer) {
    if (status == REM_ACCESS_ERR) {
      return new RegionRevokedException("the peer " + peer + " refused the READ: region revoked or unknown key");
    }
    if (status == WR_FLUSH_ERR) {
      return new PeerClosedException("the queue pair to " + peer + " failed earlier; READ flushed");
    }
    if (status == RETRY_EXC_ERR) {
      return new PeerClosedException("the peer " + peer + " stopped answering (transport retries exhausted)");
    }
    return new TransportException("READ from " + peer + " failed: " + name(status));
  }
}
