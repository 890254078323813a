package io.sluice.transport.wire;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.crypto.Hkdf;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.X25519;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletionException;

/**
 * Payload layouts of the control frames, each with its encoder and a decoder that rejects any
 * payload that is not exactly well formed. All integers are big-endian; strings are a u16 byte
 * count followed by UTF-8 ({@link #string}, {@link #putString}). Bulk payloads (READ_RESPONSE data, REQUEST and RESPONSE messages)
 * are raw bytes and have no layout here; the requests of a control service are laid out by
 * its provider, with the helpers here.
 */
public final class Frames {
  /** Protocol version spoken in HELLO and CHALLENGE. */
  public static final int VERSION = 7;
  /** Length of the nonces. */
  public static final int NONCE_LENGTH = 32;
  /** HELLO/CHALLENGE flag: this side asks for an encrypted connection; no other flag is defined. */
  public static final int FLAG_ENCRYPT = 1;
  /** Largest control payload; anything bigger is a protocol error. */
  public static final int MAX_CONTROL_PAYLOAD = 4096;

  private Frames() {}

  /**
   * HELLO, client to server: u16 version, i64 node id, u8 flags ({@link #FLAG_ENCRYPT}),
   * nonce, ephemeral X25519 public key, Ed25519 identity public key; {@value #LENGTH} bytes. The
   * decoder accepts only this exact encoding, so {@code decode(b).encode()} gives back b, the bytes
   * the transcript hash covers.
   */
  public record Hello(int version, long node, int flags, byte[] nonce, byte[] ephemeralKey, byte[] identityKey) {
    public static final int LENGTH = 2 + 8 + 1 + NONCE_LENGTH + X25519.KEY_LENGTH + NodeIdentity.PUBLIC_KEY_LENGTH;

    public ByteBuffer encode() {
      return greeting(version, node, flags, nonce, ephemeralKey, identityKey);
    }

    /** @throws ProtocolException for another version ("unsupported protocol version") or a malformed payload */
    public static Hello decode(ByteBuffer in) throws ProtocolException {
      if (in.remaining() >= 2 && (in.getShort(in.position()) & 0xffff) != VERSION) {
        throw new ProtocolException("unsupported protocol version " + (in.getShort(in.position()) & 0xffff)
            + "; this side speaks " + VERSION);
      }
      expectLength(FrameType.HELLO, in, LENGTH);
      return new Hello(in.getShort() & 0xffff, in.getLong(), readFlags(in), bytes(in, NONCE_LENGTH),
          bytes(in, X25519.KEY_LENGTH), bytes(in, NodeIdentity.PUBLIC_KEY_LENGTH));
    }
  }

  /**
   * CHALLENGE, server to client: the same layout as {@link Hello} with the server's values. It
   * carries nothing derived from the secret, so connecting gives no one a value to test guesses
   * of the secret against.
   */
  public record Challenge(int version, long node, int flags, byte[] nonce, byte[] ephemeralKey, byte[] identityKey) {
    public static final int LENGTH = Hello.LENGTH;

    public ByteBuffer encode() {
      return greeting(version, node, flags, nonce, ephemeralKey, identityKey);
    }

    /** Any version decodes; the client refuses any but {@link #VERSION}. */
    public static Challenge decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.CHALLENGE, in, LENGTH);
      return new Challenge(in.getShort() & 0xffff, in.getLong(), readFlags(in), bytes(in, NONCE_LENGTH),
          bytes(in, X25519.KEY_LENGTH), bytes(in, NodeIdentity.PUBLIC_KEY_LENGTH));
    }
  }

  private static ByteBuffer greeting(int version, long node, int flags, byte[] nonce, byte[] ephemeralKey,
      byte[] identityKey) {
    return ByteBuffer.allocate(Hello.LENGTH).putShort((short) version).putLong(node).put((byte) flags).put(nonce)
        .put(ephemeralKey).put(identityKey).flip();
  }

  /**
   * AUTH, client to server: the client's finished value, HMAC-SHA256(client finished key, th),
   * then its Ed25519 signature of "sluice/7 client signature" | th.
   */
  public record Auth(byte[] finished, byte[] signature) {
    public static final int LENGTH = Hkdf.HASH_LENGTH + NodeIdentity.SIGNATURE_LENGTH;

    public ByteBuffer encode() {
      return ByteBuffer.allocate(LENGTH).put(finished).put(signature).flip();
    }

    public static Auth decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.AUTH, in, LENGTH);
      return new Auth(bytes(in, Hkdf.HASH_LENGTH), bytes(in, NodeIdentity.SIGNATURE_LENGTH));
    }
  }

  /**
   * AUTH_OK, the first protected frame from the server: its Ed25519 signature of "sluice/7 server
   * signature" | th | the client's finished value. The server signs only for a client that has
   * proven the secret, so no one without it can make the server spend a signature.
   */
  public record AuthOk(byte[] signature) {
    public static final int LENGTH = NodeIdentity.SIGNATURE_LENGTH;

    public ByteBuffer encode() {
      return ByteBuffer.allocate(LENGTH).put(signature).flip();
    }

    public static AuthOk decode(ByteBuffer in) throws ProtocolException {
      expectLength(FrameType.AUTH_OK, in, LENGTH);
      return new AuthOk(bytes(in, NodeIdentity.SIGNATURE_LENGTH));
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

  /**
   * ERROR: u8 code, u16 n, n bytes of UTF-8 text, n being exactly what the payload holds after
   * them. The text is for people, and the code alone says what the error means: {@link #encode}
   * writes well-formed UTF-8 of at most {@link #MAX_TEXT_CODE_POINTS} code points that fits a
   * control payload, cut at a code point boundary (an unpaired surrogate becomes '?'); {@link
   * #decode} replaces each ill-formed subsequence of a peer's text with U+FFFD and keeps at most
   * {@link #MAX_TEXT_CODE_POINTS} code points of it.
   */
  public record ErrorFrame(ErrorCode code, String message) {
    /** The most code points of text an ERROR carries or is read with. */
    public static final int MAX_TEXT_CODE_POINTS = 1024;
    /** Bytes before the text: code and length. */
    private static final int HEADER = 3;

    public ByteBuffer encode() {
      byte[] text = cutUtf8(message == null ? "" : message, MAX_TEXT_CODE_POINTS, MAX_CONTROL_PAYLOAD - HEADER);
      return ByteBuffer.allocate(HEADER + text.length).put(code.id()).putShort((short) text.length).put(text).flip();
    }

    /**
     * The ERROR that answers a request whose message handler failed with {@code error} (a {@link
     * CompletionException} stands for its cause): EXHAUSTED with the message of a {@link
     * ResourceExhaustedException}, the handler's refusal for load; HANDLER_FAILED naming anything
     * else, another {@code TransportException} too, since what failed a handler's own work says
     * nothing of this connection.
     */
    public static ErrorFrame ofHandlerFailure(Throwable error) {
      Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      if (cause instanceof ResourceExhaustedException) {
        return new ErrorFrame(ErrorCode.EXHAUSTED, cause.getMessage());
      }
      return new ErrorFrame(ErrorCode.HANDLER_FAILED, String.valueOf(cause));
    }

    /** @throws ProtocolException for an unknown code, or a text length other than what the payload holds */
    public static ErrorFrame decode(ByteBuffer in) throws ProtocolException {
      if (in.remaining() < HEADER) {
        throw new ProtocolException("ERROR payload too short: " + in.remaining());
      }
      ErrorCode code = ErrorCode.fromId(in.get());
      int n = in.getShort() & 0xffff;
      if (n != in.remaining()) {
        throw new ProtocolException("ERROR text of " + n + " bytes in a payload that has " + in.remaining()
            + " after its code and length");
      }
      // The String constructor replaces ill-formed bytes with U+FFFD (one for a whole encoded
      // surrogate, where Python puts one per byte: docs/protocol.md allows either).
      String text = new String(bytes(in, n), StandardCharsets.UTF_8);
      return new ErrorFrame(code, firstCodePoints(text, MAX_TEXT_CODE_POINTS));
    }
  }

  /**
   * CONTROL: u8 service id (1..255), then the service's request, at most {@link
   * #MAX_CONTROL_PAYLOAD} bytes whose layout belongs to the service. A CONTROL_REPLY carries the
   * service's answer alone (the correlation id ties it to its request), also at most {@link
   * #MAX_CONTROL_PAYLOAD} bytes.
   */
  public record Control(int service, ByteBuffer request) {
    /** Bytes before the service's request. */
    public static final int HEADER = 1;

    public Control {
      checkServiceId(service);
      if (request.remaining() > MAX_CONTROL_PAYLOAD) {
        throw new IllegalArgumentException("control request of " + request.remaining() + " bytes exceeds "
            + MAX_CONTROL_PAYLOAD);
      }
    }

    public ByteBuffer encode() {
      return ByteBuffer.allocate(HEADER + request.remaining()).put((byte) service).put(request.duplicate()).flip();
    }

    public static Control decode(ByteBuffer in) throws ProtocolException {
      if (in.remaining() < HEADER || in.remaining() > HEADER + MAX_CONTROL_PAYLOAD) {
        throw new ProtocolException("CONTROL payload of " + in.remaining() + " bytes outside " + HEADER + ".."
            + (HEADER + MAX_CONTROL_PAYLOAD));
      }
      int service = in.get() & 0xff;
      if (service == 0) {
        throw new ProtocolException("CONTROL for service 0");
      }
      return new Control(service, in.slice());
    }
  }

  /** @throws IllegalArgumentException unless {@code id} is a service id, 1..255 */
  public static int checkServiceId(int id) {
    if (id < 1 || id > 255) {
      throw new IllegalArgumentException("control service id " + id + " outside 1..255");
    }
    return id;
  }

  /**
   * @throws ProtocolException unless {@code in} holds exactly {@code length} bytes
   * @param what the payload's name, for the message
   */
  public static void expectLength(String what, ByteBuffer in, int length) throws ProtocolException {
    if (in.remaining() != length) {
      throw new ProtocolException(what + " payload is " + in.remaining() + " bytes, expected " + length);
    }
  }

  /** @throws ProtocolException if bytes are left in {@code in} after {@code what} */
  public static void expectConsumed(String what, ByteBuffer in) throws ProtocolException {
    if (in.hasRemaining()) {
      throw new ProtocolException(what + " payload has " + in.remaining() + " trailing bytes");
    }
  }

  private static void expectLength(FrameType type, ByteBuffer in, int length) throws ProtocolException {
    expectLength(type.name(), in, length);
  }

  private static void expectConsumed(FrameType type, ByteBuffer in) throws ProtocolException {
    expectConsumed(type.name(), in);
  }

  private static int readFlags(ByteBuffer in) throws ProtocolException {
    int f = in.get() & 0xff;
    if ((f & ~FLAG_ENCRYPT) != 0) {
      throw new ProtocolException("unknown handshake flags " + f);
    }
    return f;
  }

  /** Reads {@code n} bytes. @throws ProtocolException if fewer remain */
  public static byte[] bytes(ByteBuffer in, int n) throws ProtocolException {
    if (in.remaining() < n) {
      throw new ProtocolException("payload truncated: need " + n + " bytes, have " + in.remaining());
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  /** Reads a string: u16 byte count, UTF-8. @throws ProtocolException if truncated */
  public static String string(ByteBuffer in) throws ProtocolException {
    if (in.remaining() < 2) {
      throw new ProtocolException("payload truncated before a string length");
    }
    int n = in.getShort() & 0xffff;
    return new String(bytes(in, n), StandardCharsets.UTF_8);
  }

  /** Writes a string as {@link #string} reads it. */
  public static ByteBuffer putString(ByteBuffer out, byte[] utf8) {
    return out.putShort((short) utf8.length).put(utf8);
  }

  /**
   * The UTF-8 of the longest start of {@code s} that has at most {@code maxCodePoints} code points
   * and encodes in at most {@code maxBytes} bytes: never half a code point, so well formed.
   */
  static byte[] cutUtf8(String s, int maxCodePoints, int maxBytes) {
    int end = 0;
    int bytes = 0;
    for (int points = 0; end < s.length() && points < maxCodePoints; points++) {
      int cp = s.codePointAt(end);
      boolean unpaired = cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE;
      int n = unpaired || cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (bytes + n > maxBytes) {
        break;
      }
      bytes += n;
      end += Character.charCount(cp);
    }
    // The encoder writes an unpaired surrogate, which has no UTF-8 form, as '?': one byte, counted so above.
    return s.substring(0, end).getBytes(StandardCharsets.UTF_8);
  }

  /** The first {@code max} code points of {@code s}, or all of it if it has no more. */
  static String firstCodePoints(String s, int max) {
    return s.codePointCount(0, s.length()) <= max ? s : s.substring(0, s.offsetByCodePoints(0, max));
  }
}
