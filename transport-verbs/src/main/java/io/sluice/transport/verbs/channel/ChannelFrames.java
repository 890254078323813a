package io.sluice.transport.verbs.channel;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.wire.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The one definition of the frames a message queue pair carries. Every SEND is one frame of
 * at most {@link #SLOT_BYTES} bytes, received into one pre-posted buffer of that size.
 * Big-endian:
 *
 * <pre>
 *   u8 type, u8 error code (ERROR only, else 0), u16 0, i32 correlation id, then by type:
 *   REQUEST (1), RESPONSE (2)         the message, at most {@link #INLINE_BYTES} bytes
 *   REQUEST_STAGED (3),
 *   RESPONSE_STAGED (4)               i64 address, i32 rkey, i32 length: a larger message in
 *                                     the sender's registered memory, which the receiver READs
 *   ERROR (5)                         UTF-8 text; answers a request with a failure
 *   RELEASE (6)                       nothing: the staged response of that id was read
 * </pre>
 *
 * Decoding rejects anything not exactly well formed with {@link ProtocolException}. Stateless.
 */
public final class ChannelFrames {
  public static final int SLOT_BYTES = 4096;
  static final int HEADER_BYTES = 8;
  public static final int INLINE_BYTES = SLOT_BYTES - HEADER_BYTES;
  private static final int STAGED_BODY = 8 + 4 + 4;

  /** Frame types. */
  public enum Type {
    REQUEST(1), RESPONSE(2), REQUEST_STAGED(3), RESPONSE_STAGED(4), ERROR(5), RELEASE(6);

    final byte id;

    Type(int id) {
      this.id = (byte) id;
    }

    static Type of(byte id) throws ProtocolException {
      for (Type t : values()) {
        if (t.id == id) {
          return t;
        }
      }
      throw new ProtocolException("unknown message frame type " + (id & 0xff));
    }
  }

  /** Where a staged message lies in its sender's registered memory. */
  public record Staged(long address, int rkey, int length) {}

  /**
   * A decoded frame. {@code body} is a private copy (message bytes or error text) for
   * REQUEST, RESPONSE and ERROR, else empty; {@code staged} is set for the staged types.
   */
  public record Frame(Type type, int correlationId, ErrorCode errorCode, ByteBuffer body, Staged staged) {
    public String errorText() {
      return StandardCharsets.UTF_8.decode(body.duplicate()).toString();
    }
  }

  private ChannelFrames() {}

  /** A REQUEST or RESPONSE frame carrying {@code message}'s remaining bytes (not moved). */
  public static ByteBuffer inline(Type type, int correlationId, ByteBuffer message) {
    if (type != Type.REQUEST && type != Type.RESPONSE) {
      throw new IllegalArgumentException(type + " carries no message");
    }
    if (message.remaining() > INLINE_BYTES) {
      throw new IllegalArgumentException("a message of " + message.remaining() + " bytes does not fit a frame");
    }
    return header(type, (byte) 0, correlationId, message.remaining()).put(message.duplicate()).flip();
  }

  public static ByteBuffer staged(Type type, int correlationId, Staged staged) {
    if (type != Type.REQUEST_STAGED && type != Type.RESPONSE_STAGED) {
      throw new IllegalArgumentException(type + " is not a staged type");
    }
    return header(type, (byte) 0, correlationId, STAGED_BODY)
        .putLong(staged.address()).putInt(staged.rkey()).putInt(staged.length()).flip();
  }

  /** An ERROR frame; text longer than a frame holds is cut. */
  public static ByteBuffer error(int correlationId, ErrorCode code, String text) {
    byte[] utf8 = String.valueOf(text).getBytes(StandardCharsets.UTF_8);
    int n = Math.min(utf8.length, INLINE_BYTES);
    return header(Type.ERROR, code.id(), correlationId, n).put(utf8, 0, n).flip();
  }

  public static ByteBuffer release(int correlationId) {
    return header(Type.RELEASE, (byte) 0, correlationId, 0).flip();
  }

  private static ByteBuffer header(Type type, byte code, int correlationId, int bodyLength) {
    return ByteBuffer.allocate(HEADER_BYTES + bodyLength).put(type.id).put(code).putShort((short) 0)
        .putInt(correlationId);
  }

  /**
   * Decodes the frame in {@code in}'s remaining bytes, at most {@link #SLOT_BYTES}. A staged
   * length must be in 1..{@code maxMessageBytes}.
   */
  public static Frame decode(ByteBuffer in, int maxMessageBytes) throws ProtocolException {
    ByteBuffer b = in.duplicate();
    if (b.remaining() < HEADER_BYTES || b.remaining() > SLOT_BYTES) {
      throw new ProtocolException("message frame of " + b.remaining() + " bytes");
    }
    Type type = Type.of(b.get());
    byte code = b.get();
    short zero = b.getShort();
    int corr = b.getInt();
    if (zero != 0 || (code != 0 && type != Type.ERROR)) {
      throw new ProtocolException(type + " frame with non-zero reserved bytes");
    }
    ErrorCode errorCode = type == Type.ERROR ? ErrorCode.fromId(code) : null;
    switch (type) {
      case REQUEST, RESPONSE, ERROR -> {
        ByteBuffer body = ByteBuffer.allocate(b.remaining()).put(b).flip();
        return new Frame(type, corr, errorCode, body, null);
      }
      case REQUEST_STAGED, RESPONSE_STAGED -> {
        if (b.remaining() != STAGED_BODY) {
          throw new ProtocolException(type + " frame with a body of " + b.remaining() + " bytes");
        }
        Staged staged = new Staged(b.getLong(), b.getInt(), b.getInt());
        if (staged.length() <= 0 || staged.length() > maxMessageBytes) {
          throw new ProtocolException(type + " of " + staged.length() + " bytes; messages are 1.." + maxMessageBytes);
        }
        return new Frame(type, corr, null, ByteBuffer.allocate(0), staged);
      }
      default -> {
        if (b.hasRemaining()) {
          throw new ProtocolException("RELEASE frame with a body");
        }
        return new Frame(type, corr, null, ByteBuffer.allocate(0), null);
      }
    }
  }
}
