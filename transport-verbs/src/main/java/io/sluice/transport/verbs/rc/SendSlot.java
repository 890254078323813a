package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.SVCPostSend;

/**
 * A SEND of one registered buffer, built once ({@link RdmaQueuePair#prepareSend}) with its
 * own slot number and posted many times ({@link RdmaQueuePair#send}): only the length, the
 * signaled flag and the generation in the work request id change. One SEND at a time per slot.
 */
public final class SendSlot {
  final SVCPostSend call;
  final int capacity;
  final Entry entry;

  SendSlot(SVCPostSend call, int capacity, Entry entry) {
    this.call = call;
    this.capacity = capacity;
    this.entry = entry;
  }

  /** The slot's place on the send queue while its SEND is outstanding. */
  static final class Entry extends SendQueueEntry {
    private final MessagePath path;

    Entry(RdmaQueuePair owner, MessagePath path, long slot) {
      super(owner, slot, Kind.SEND);
      this.path = path;
    }

    @Override
    void freed() {
      path.sendRetired();
    }
  }
}
