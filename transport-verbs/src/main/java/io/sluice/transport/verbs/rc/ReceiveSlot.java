package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.SVCPostRecv;

/**
 * A receive into one registered buffer, built once ({@link RdmaQueuePair#prepareReceive})
 * with its own work request id and posted again each time its message has been taken out
 * ({@link RdmaQueuePair#receive}).
 */
public final class ReceiveSlot {
  final SVCPostRecv call;
  final MessagePath.PostedReceive entry;

  ReceiveSlot(SVCPostRecv call, MessagePath.PostedReceive entry) {
    this.call = call;
    this.entry = entry;
  }
}
