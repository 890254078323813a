package io.sluice.transport.wire;

import io.sluice.transport.ProtocolException;
import java.nio.ByteBuffer;

/**
 * The one definition of the carrier's frame header: {@link #LENGTH} bytes, big-endian:
 *
 * <pre>
 *   0  u8   magic 0x5C
 *   1  u8   frame type ({@link FrameType})
 *   2  u16  reserved, must be 0
 *   4  i32  payload length, 0 .. limit
 *   8  i64  correlation id
 * </pre>
 *
 * followed by the payload. Payload layouts are defined next to their frames in {@link Frames}.
 *
 * <p>HELLO, CHALLENGE, AUTH and any ERROR before AUTH_OK travel bare. From AUTH_OK on (the
 * server's first protected frame; the client's first is the one it sends after AUTH_OK), a
 * {@link RecordLayer#TAG_LENGTH}-byte tag follows the header: header | tag | payload. On an
 * encrypted connection the payload travels as records of at most {@link RecordLayer#RECORD_LENGTH}
 * bytes of ciphertext, each after its own tag: header | tag | ciphertext | tag | ciphertext ...
 * The payload length in the header is the plain payload's and never counts a tag. {@link
 * RecordLayer} defines tags and records.
 */
public record FrameHeader(FrameType type, int payloadLength, long correlationId) {
  public static final int LENGTH = 16;
  static final byte MAGIC = 0x5C;

  public void encode(ByteBuffer out) {
    out.put(MAGIC).put(type.id()).putShort((short) 0).putInt(payloadLength).putLong(correlationId);
  }

  public ByteBuffer toBuffer() {
    ByteBuffer b = ByteBuffer.allocate(LENGTH);
    encode(b);
    return b.flip();
  }

  /**
   * Decodes a header at the buffer's position.
   *
   * @param maxPayload the largest payload this frame type may carry on this connection
   * @throws ProtocolException for a wrong magic, an unknown type, nonzero reserved bits or a
   *     length outside 0..maxPayload
   */
  public static FrameHeader decode(ByteBuffer in, long maxPayload) throws ProtocolException {
    if (in.remaining() < LENGTH) {
      throw new ProtocolException("truncated frame header: " + in.remaining() + " bytes");
    }
    byte magic = in.get();
    if (magic != MAGIC) {
      throw new ProtocolException(String.format("bad frame magic 0x%02x", magic & 0xff));
    }
    FrameType type = FrameType.fromId(in.get());
    short reserved = in.getShort();
    if (reserved != 0) {
      throw new ProtocolException("reserved header bits set: " + reserved);
    }
    int length = in.getInt();
    long corr = in.getLong();
    if (length < 0 || length > maxPayload) {
      throw new ProtocolException(
          "frame " + type + " payload length " + length + " outside 0.." + maxPayload);
    }
    return new FrameHeader(type, length, corr);
  }
}
