package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import java.io.IOException;

/**
 * The state and limits of a queue pair as the device reports them now (the library's own
 * entry point beside DiSNI's; ibv_query_qp). Stateless; thread safe.
 */
public final class QueuePairQuery {

  static {
    System.loadLibrary("disni");
  }

  /** A queue pair's state (enum ibv_qp_state) and limits. */
  public record Snapshot(int state, int maxSendSge, int maxRecvSge, int maxReadsOut, int maxReadsIn) {
    /** IBV_QPS_ERR: the queue pair failed (or was disconnected locally) and only flushes. */
    public boolean failed() {
      return state == IbvQP.IBV_QPS_ERR;
    }
  }

  private QueuePairQuery() {}

  /** Asks the device about {@code qp}. */
  public static Snapshot query(IbvQP qp) throws IOException {
    int[] v = query0(handle(qp));
    return new Snapshot(v[0], v[1], v[2], v[3], v[4]);
  }

  static long handle(IbvQP qp) {
    if (qp instanceof com.ibm.disni.verbs.impl.NatObject o) {
      return o.getObjId();
    }
    throw new IllegalArgumentException("not a queue pair of the native library: " + qp);
  }

  private static native int[] query0(long qp) throws IOException;
}
