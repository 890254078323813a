package io.sluice.transport.shm;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.wire.Frames;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The one definition of the shm control service's requests and replies, carried in CONTROL and
 * CONTROL_REPLY frames under {@link #SERVICE}. A request is a u8 operation and its body; each
 * decoder rejects anything that is not exactly well formed. Integers are big-endian, strings as
 * {@link Frames#string}.
 *
 * <pre>
 *   HELLO  request: u8 1                     reply: string directory, token ({@link ShmArena.Info})
 *   OPEN   request: u8 2, i64 key            reply: string path, i64 file offset, i64 length,
 *                                            i32 revocation slot ({@link ShmArena.Location})
 * </pre>
 */
public final class ShmMessages {
  /** The control service id of shared memory on the carrier. */
  public static final int SERVICE = 1;
  static final byte HELLO = 1;
  static final byte OPEN = 2;

  private ShmMessages() {}

  /** HELLO: asks where the peer's arena lives. */
  public static ByteBuffer hello() {
    return ByteBuffer.allocate(1).put(HELLO).flip();
  }

  /** OPEN: asks for the backing file of {@code key}. */
  public static ByteBuffer open(long key) {
    return ByteBuffer.allocate(1 + 8).put(OPEN).putLong(key).flip();
  }

  /** The operation of a request, consumed. */
  static byte operation(ByteBuffer request) throws ProtocolException {
    if (!request.hasRemaining()) {
      throw new ProtocolException("empty shm request");
    }
    byte op = request.get();
    if (op != HELLO && op != OPEN) {
      throw new ProtocolException("unknown shm operation " + op);
    }
    return op;
  }

  /** The key of an OPEN request after its operation. */
  static long key(ByteBuffer request) throws ProtocolException {
    Frames.expectLength("shm OPEN", request, 8);
    return request.getLong();
  }

  /** HELLO's reply: string directory, token of {@link ShmArena#TOKEN_LENGTH} bytes. */
  public static ByteBuffer encode(ShmArena.Info info) {
    byte[] dir = info.directory().getBytes(StandardCharsets.UTF_8);
    return Frames.putString(ByteBuffer.allocate(2 + dir.length + ShmArena.TOKEN_LENGTH), dir).put(info.token()).flip();
  }

  public static ShmArena.Info decodeInfo(ByteBuffer in) throws ProtocolException {
    String dir = Frames.string(in);
    byte[] token = Frames.bytes(in, ShmArena.TOKEN_LENGTH);
    Frames.expectConsumed("shm INFO", in);
    return new ShmArena.Info(dir, token);
  }

  /** OPEN's reply: string path, i64 file offset, i64 length, i32 revocation slot. */
  public static ByteBuffer encode(ShmArena.Location region) {
    byte[] p = region.path().getBytes(StandardCharsets.UTF_8);
    return Frames.putString(ByteBuffer.allocate(2 + p.length + 8 + 8 + 4), p)
        .putLong(region.fileOffset()).putLong(region.length()).putInt(region.slot()).flip();
  }

  public static ShmArena.Location decodeLocation(ByteBuffer in) throws ProtocolException {
    String path = Frames.string(in);
    if (in.remaining() != 20) {
      throw new ProtocolException("shm REGION payload has " + in.remaining() + " bytes after the path, expected 20");
    }
    ShmArena.Location r = new ShmArena.Location(path, in.getLong(), in.getLong(), in.getInt());
    if (r.fileOffset() < 0 || r.length() < 0 || r.slot() < 0) {
      throw new ProtocolException("shm REGION with negative field");
    }
    return r;
  }
}
