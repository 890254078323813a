package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvSendWR;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A ring of READ work requests in native memory, each built once (opcode, its one
 * scatter/gather entry) and posted many times: {@link #set} changes only the id, the
 * signaled flag, the remote address and rkey and the local address, length and lkey of a
 * slot, and {@link #post} links a run of consecutive slots into one chain and hands it to
 * {@code ibv_post_send} in place. Nothing is allocated or translated per READ (the library's
 * own entry point beside DiSNI's, whose post calls serialize new records per post).
 *
 * <p>Every field that differs between two READs is written by {@code set}, and posting sets
 * the chain's links afresh, so a slot carries nothing of its previous use, failed or not.
 *
 * <p>Not thread safe: the owning queue pair calls it under its lock. {@link #close()} once,
 * after the queue pair is destroyed (the device reads the slots only during a post).
 */
final class ReadChain implements AutoCloseable {

  static {
    System.loadLibrary("disni");
  }

  private static final int[] LAYOUT = layout0();
  private static final int STRIDE = LAYOUT[0];
  private static final int WR_ID = LAYOUT[1];
  private static final int NEXT = LAYOUT[2];
  private static final int SEND_FLAGS = LAYOUT[3];
  private static final int OPCODE = LAYOUT[4];
  private static final int NUM_SGE = LAYOUT[5];
  private static final int REMOTE_ADDR = LAYOUT[6];
  private static final int RKEY = LAYOUT[7];
  private static final int SGE_ADDR = LAYOUT[8];
  private static final int SGE_LENGTH = LAYOUT[9];
  private static final int SGE_LKEY = LAYOUT[10];

  private final ByteBuffer slots;
  private final long base;
  private final int capacity;
  private boolean closed;

  /** A ring of {@code capacity} READ slots. */
  ReadChain(int capacity) throws IOException {
    this.capacity = capacity;
    this.slots = create0(capacity).order(ByteOrder.nativeOrder());
    this.base = address0(slots);
  }

  int capacity() {
    return capacity;
  }

  /** Fills slot {@code index} with one READ. */
  void set(int index, long wrId, RdmaRead read, boolean signaled) {
    int at = offset(index);
    slots.putLong(at + WR_ID, wrId);
    slots.putInt(at + SEND_FLAGS, signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0);
    slots.putLong(at + REMOTE_ADDR, read.remoteAddress());
    slots.putInt(at + RKEY, read.rkey());
    slots.putLong(at + SGE_ADDR, read.localAddress());
    slots.putInt(at + SGE_LENGTH, read.length());
    slots.putInt(at + SGE_LKEY, read.lkey());
  }

  /** Makes slot {@code index} signaled (the last READ of a post). */
  void signal(int index) {
    slots.putInt(offset(index) + SEND_FLAGS, IbvSendWR.IBV_SEND_SIGNALED);
  }

  /**
   * Posts {@code count} slots from {@code first} (wrapping at the capacity) as one chain.
   *
   * @throws IOException naming the READ the device refused (those before it were posted)
   */
  void post(IbvQP qp, int first, int count) throws IOException {
    checkOpen();
    post0(QueuePairQuery.handle(qp), base, capacity, first, count);
  }

  /** Links the chain as {@link #post} would, without posting (to inspect it). */
  void link(int first, int count) throws IOException {
    checkOpen();
    link0(base, capacity, first, count);
  }

  /**
   * What slot {@code index} holds now: wr_id, next slot (-1 for none), send_flags, opcode,
   * num_sge, remote_addr, rkey, SGE address, length and lkey.
   */
  long[] inspect(int index) {
    int at = offset(index);
    long next = slots.getLong(at + NEXT);
    return new long[] {slots.getLong(at + WR_ID), next == 0 ? -1 : (next - base) / STRIDE,
        slots.getInt(at + SEND_FLAGS), slots.getInt(at + OPCODE), slots.getInt(at + NUM_SGE),
        slots.getLong(at + REMOTE_ADDR), slots.getInt(at + RKEY), slots.getLong(at + SGE_ADDR),
        Integer.toUnsignedLong(slots.getInt(at + SGE_LENGTH)), slots.getInt(at + SGE_LKEY)};
  }

  private int offset(int index) {
    if (index < 0 || index >= capacity) {
      throw new IndexOutOfBoundsException("READ slot " + index + " of " + capacity);
    }
    return index * STRIDE;
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("the READ chain is freed");
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      free0(base);
    }
  }

  private static native int[] layout0();

  private static native ByteBuffer create0(int capacity) throws IOException;

  private static native long address0(ByteBuffer buffer);

  private static native void free0(long base);

  private static native void link0(long base, int capacity, int first, int count) throws IOException;

  private static native void post0(long qp, long base, int capacity, int first, int count) throws IOException;
}
