package io.sluice.transport;

import java.nio.ByteBuffer;

/**
 * What a peer needs to READ a registered region: the node that owns it, the base address the
 * provider reads from, the length, and the key that authorises access. This class defines the
 * only wire encoding of a descriptor: {@link #ENCODED_LENGTH} bytes, big-endian, in the order
 * node, address, length, key.
 *
 * <p>On tcp and shm the address is 0 and the key is a random 64-bit value; on verbs the address
 * is the registered virtual address and the key carries the memory region's rkey. Offsets given
 * to {@link Connection#read} are always relative to the start of the region.
 */
public record RemoteDescriptor(long node, long address, long length, long key) {
  /** Size in bytes of {@link #encode}'s output. */
  public static final int ENCODED_LENGTH = 32;

  public RemoteDescriptor {
    if (length < 0) {
      throw new IllegalArgumentException("negative region length " + length);
    }
  }

  /** Writes the descriptor at the buffer's position and advances it. */
  public void encode(ByteBuffer out) {
    out.putLong(node).putLong(address).putLong(length).putLong(key);
  }

  /** Returns the encoded form in a new array. */
  public byte[] toBytes() {
    ByteBuffer b = ByteBuffer.allocate(ENCODED_LENGTH);
    encode(b);
    return b.array();
  }

  /**
   * Reads a descriptor at the buffer's position and advances it.
   *
   * @throws IllegalArgumentException if fewer than {@link #ENCODED_LENGTH} bytes remain or the
   *     length field is negative
   */
  public static RemoteDescriptor decode(ByteBuffer in) {
    if (in.remaining() < ENCODED_LENGTH) {
      throw new IllegalArgumentException(
          "descriptor needs " + ENCODED_LENGTH + " bytes, " + in.remaining() + " remain");
    }
    return new RemoteDescriptor(in.getLong(), in.getLong(), in.getLong(), in.getLong());
  }

  /** Decodes {@link #toBytes()} output. */
  public static RemoteDescriptor fromBytes(byte[] bytes) {
    return decode(ByteBuffer.wrap(bytes));
  }

  @Override
  public String toString() {
    return String.format(
        "RemoteDescriptor[node=%016x, address=0x%x, length=%d, key=<hidden>]", node, address, length);
  }
}
