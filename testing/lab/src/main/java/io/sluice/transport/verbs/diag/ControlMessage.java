package io.sluice.transport.verbs.diag;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The control message of {@link ReadCheck}, exchanged by SEND/RECV: which region to read
 * (server to client) or what was read (client to server). Fixed 32 bytes, little endian:
 * magic, kind, address, length, rkey, checksum.
 */
record ControlMessage(int kind, long address, int length, int rkey, long checksum) {

  static final int SIZE = 32;
  static final int DESCRIPTOR = 1;
  static final int DONE = 2;
  private static final int MAGIC = 0x534c4331;

  void writeTo(ByteBuffer buffer) {
    ByteBuffer out = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    out.putInt(MAGIC).putInt(kind).putLong(address).putInt(length).putInt(rkey).putLong(checksum);
  }

  static ControlMessage readFrom(ByteBuffer buffer) {
    ByteBuffer in = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int magic = in.getInt();
    ControlMessage message =
        new ControlMessage(in.getInt(), in.getLong(), in.getInt(), in.getInt(), in.getLong());
    return magic == MAGIC ? message : new ControlMessage(-1, 0, 0, 0, 0);
  }

  ControlMessage expect(int expectedKind) throws IOException {
    if (kind != expectedKind) {
      throw new IOException("expected control message kind " + expectedKind + ", got " + this);
    }
    return this;
  }
}
