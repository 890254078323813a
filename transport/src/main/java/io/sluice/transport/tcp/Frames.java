package io.sluice.transport.tcp;

import io.sluice.transport.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Payload layouts of the control frames, each with its encoder and a decoder that rejects any
 * payload that is not exactly well formed. All integers are big-endian; strings are a u16 byte
 * count followed by UTF-8. Bulk payloads (READ_RESPONSE data, REQUEST and RESPONSE messages)
 * are raw bytes and have no layout here.
 */
public final class Frames {
  /** Protocol version spoken in HELLO and CHALLENGE. */
  public static final int VERSION = 2;
  /** Length of nonces and HMAC-SHA256 proofs. */
  public static final int NONCE_LENGTH = 32;
  /** Largest control payload; anything bigger is a protocol error. */
  public static final int MAX_CONTROL_PAYLOAD = 4096;
  /** Length of the token that proves two processes see the same shm directory. */
  public static final int SHM_TOKEN_LENGTH = io.sluice.transport.shm.ShmArena.TOKEN_LENGTH;

  private Frames() {}

  /** HELLO: u16 version, i64 node, u8 flags ({@link Handshake#FLAG_ENCRYPT}), nonce. */
  public record Hello(int version, long node, int flags, byte[] nonce) {
    static final int LENGTH = 2 + 8 + 1 + NONCE_LENGTH;

    public ByteBuffer encode() {
      return ByteBuffer.allocate(LENGTH).putShort((short) version).putLong(node).put((byte) flags).put(nonce).flip();
    }

    public static Hello decode(ByteBuffer in) throws ProtocolException {
      if (in.remaining() != LENGTH && in.remaining() >= 2 && (in.getShort(in.position()) & 0xffff) != VERSION) {
        throw new ProtocolException("unsupported protocol version " + (in.getShort(in.position()) & 0xffff)
            + "; this side speaks " + VERSION);
      }
      expectLength(FrameType.HELLO, in, LENGTH);
      return new Hello(in.getShort() & 0xffff, in.getLong(), readFlags(in), bytes(in, NONCE_LENGTH));
    }
  }

  /** CHALLENGE: u16 version, i64 node, u8 flags, nonce, server proof. */
  public record Challenge(int version, long node, int flags, byte[] nonce, byte[] proof) {
    static final int LENGTH = 2 + 8 + 1 + NONCE_LENGTH + NONCE_LENGTH;

    public ByteBuffer encode() {
      return ByteBuffer.allocate(LENGTH).putShort((short) version).putLong(node).put((byte) flags).put(nonce)
          .put(proof).flip();
    }

    public static Challenge decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.CHALLENGE, in, LENGTH);
      return new Challenge(in.getShort() & 0xffff, in.getLong(), readFlags(in), bytes(in, NONCE_LENGTH),
          bytes(in, NONCE_LENGTH));
    }
  }

  /** AUTH: client proof. */
  public record Auth(byte[] proof) {
    public ByteBuffer encode() {
      return ByteBuffer.allocate(NONCE_LENGTH).put(proof).flip();
    }

    public static Auth decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.AUTH, in, NONCE_LENGTH);
      return new Auth(bytes(in, NONCE_LENGTH));
    }
  }

  /** READ_REQUEST: i64 key, i64 offset, i32 length. */
  public record ReadRequestFrame(long key, long offset, int length) {
    public static final int LENGTH = 8 + 8 + 4;

    public void encode(ByteBuffer out) {
      out.putLong(key).putLong(offset).putInt(length);
    }

    public static ReadRequestFrame decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.READ_REQUEST, in, LENGTH);
      ReadRequestFrame f = new ReadRequestFrame(in.getLong(), in.getLong(), in.getInt());
      if (f.offset < 0 || f.length < 0) {
        throw new ProtocolException("READ_REQUEST with negative offset or length");
      }
      return f;
    }
  }

  /** ERROR: u8 code, string message. */
  public record ErrorFrame(ErrorCode code, String message) {
    public ByteBuffer encode() {
      byte[] text = truncatedUtf8(message, 1024);
      return ByteBuffer.allocate(1 + 2 + text.length).put(code.id()).putShort((short) text.length).put(text).flip();
    }

    public static ErrorFrame decode(ByteBuffer in) throws ProtocolException {
      if (in.remaining() < 3) {
        throw new ProtocolException("ERROR payload too short: " + in.remaining());
      }
      ErrorCode code = ErrorCode.fromId(in.get());
      String text = string(in);
      expectConsumed(FrameType.ERROR, in);
      return new ErrorFrame(code, text);
    }
  }

  /** SHM_INFO: string directory, token. */
  public record ShmInfo(String directory, byte[] token) {
    public ByteBuffer encode() {
      byte[] dir = directory.getBytes(StandardCharsets.UTF_8);
      return ByteBuffer.allocate(2 + dir.length + SHM_TOKEN_LENGTH)
          .putShort((short) dir.length).put(dir).put(token).flip();
    }

    public static ShmInfo decode(ByteBuffer in) throws ProtocolException {
      String dir = string(in);
      byte[] token = bytes(in, SHM_TOKEN_LENGTH);
      expectConsumed(FrameType.SHM_INFO, in);
      return new ShmInfo(dir, token);
    }
  }

  /** SHM_OPEN: i64 key. */
  public record ShmOpen(long key) {
    public ByteBuffer encode() {
      return ByteBuffer.allocate(8).putLong(key).flip();
    }

    public static ShmOpen decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.SHM_OPEN, in, 8);
      return new ShmOpen(in.getLong());
    }
  }

  /** SHM_REGION: string path, i64 file offset, i64 length, i32 revocation slot. */
  public record ShmRegion(String path, long fileOffset, long length, int slot) {
    public ByteBuffer encode() {
      byte[] p = path.getBytes(StandardCharsets.UTF_8);
      return ByteBuffer.allocate(2 + p.length + 8 + 8 + 4)
          .putShort((short) p.length).put(p).putLong(fileOffset).putLong(length).putInt(slot).flip();
    }

    public static ShmRegion decode(ByteBuffer in) throws ProtocolException {
      String path = string(in);
      if (in.remaining() != 20) {
        throw new ProtocolException("SHM_REGION payload has " + in.remaining() + " bytes after the path, expected 20");
      }
      ShmRegion r = new ShmRegion(path, in.getLong(), in.getLong(), in.getInt());
      if (r.fileOffset < 0 || r.length < 0 || r.slot < 0) {
        throw new ProtocolException("SHM_REGION with negative field");
      }
      return r;
    }
  }

  private static void expectLength(FrameType type, ByteBuffer in, int length) throws ProtocolException {
    if (in.remaining() != length) {
      throw new ProtocolException(type + " payload is " + in.remaining() + " bytes, expected " + length);
    }
  }

  private static void expectConsumed(FrameType type, ByteBuffer in) throws ProtocolException {
    if (in.hasRemaining()) {
      throw new ProtocolException(type + " payload has " + in.remaining() + " trailing bytes");
    }
  }

  private static int readFlags(ByteBuffer in) throws ProtocolException {
    int f = in.get() & 0xff;
    if ((f & ~Handshake.FLAG_ENCRYPT) != 0) {
      throw new ProtocolException("unknown handshake flags " + f);
    }
    return f;
  }

  private static byte[] bytes(ByteBuffer in, int n) throws ProtocolException {
    if (in.remaining() < n) {
      throw new ProtocolException("payload truncated: need " + n + " bytes, have " + in.remaining());
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  private static String string(ByteBuffer in) throws ProtocolException {
    if (in.remaining() < 2) {
      throw new ProtocolException("payload truncated before a string length");
    }
    int n = in.getShort() & 0xffff;
    return new String(bytes(in, n), StandardCharsets.UTF_8);
  }

  private static byte[] truncatedUtf8(String s, int maxChars) {
    String t = s == null ? "" : s.length() > maxChars ? s.substring(0, maxChars) : s;
    return t.getBytes(StandardCharsets.UTF_8);
  }
}
