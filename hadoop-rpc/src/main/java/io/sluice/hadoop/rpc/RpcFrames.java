package io.sluice.hadoop.rpc;

import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The one definition of the engine's messages on a transport connection. All integers are
 * big-endian; a string is a u16 byte count then UTF-8 (an error message: a u32 count).
 *
 * <pre>
 * request  = magic:u32 'SRPC', version:u8 (1), type:u8, then
 *   CALL (1):    callId:i32, retryCount:i32, clientId:(u8 count, bytes), protocol:str,
 *                user:str, realUser:str (empty: none), callerHost:str, callerPort:u16,
 *                released:(u8 count, bodyId:i64 each), body
 *   RELEASE (2): released:(u8 count, bodyId:i64 each)
 *   -- released: response bodies the caller has READ; the server frees them. A caller names them
 *      in its next call, or in a RELEASE when no call follows soon.
 * body     = kind:u8, then INLINE (0): length:i32, bytes
 *                          REMOTE (1): descriptor (RemoteDescriptor's 32 bytes), length:i32,
 *                                      bodyId:i64 (0 in requests)
 * response = magic:u32, version:u8, status:u8, then
 *   OK (0):          body (the response message; empty for RELEASE)
 *   ERROR (1) and FATAL (2): errorClass:str, message:(u32 count, UTF-8)
 * </pre>
 *
 * A request body is the stock protobuf engine's request (length-delimited RequestHeaderProto,
 * then the length-delimited request message); a response body is the length-delimited response
 * message. Bodies above the configured threshold stay in the sender's registered memory and the
 * receiver READs them: the caller's request body over a connection the server opens back to the
 * caller's transport at callerHost:callerPort, the server's response body over the caller's own
 * connection. Stateless and thread safe.
 */
public final class RpcFrames {
  static final int MAGIC = 0x53525043;
  static final byte VERSION = 1;
  static final byte TYPE_CALL = 1;
  static final byte TYPE_RELEASE = 2;
  static final byte BODY_INLINE = 0;
  static final byte BODY_REMOTE = 1;
  static final byte STATUS_OK = 0;
  static final byte STATUS_ERROR = 1;
  static final byte STATUS_FATAL = 2;
  private static final int MAX_CLIENT_ID = 64;

  private RpcFrames() {}

  /** A message body: inline bytes or a region of the sender's registered memory. */
  public sealed interface Body permits Inline, Remote {
    int length();
  }

  /** Bytes carried in the message; the buffer's remaining bytes. */
  public record Inline(ByteBuffer bytes) implements Body {
    @Override
    public int length() {
      return bytes.remaining();
    }
  }

  /** {@code length} bytes at offset 0 of the sender's region; {@code id} names it for RELEASE. */
  public record Remote(RemoteDescriptor descriptor, int length, long id) implements Body {
    public Remote {
      if (length < 0 || length > descriptor.length()) {
        throw new IllegalArgumentException(
            "body length " + length + " outside its region of " + descriptor.length() + " bytes");
      }
    }
  }

  /** A request frame. */
  public sealed interface Request permits Call, Release {}

  /** Most response bodies one frame releases. */
  public static final int MAX_RELEASED = 255;

  /** One RPC call; {@code released} names response bodies the caller is done READing. */
  public record Call(int callId, int retryCount, byte[] clientId, String protocol, String user,
      String realUser, String callerHost, int callerPort, long[] released, Body body) implements Request {
    public Call {
      checkReleased(released);
    }
  }

  /** The caller is done READing these response bodies. */
  public record Release(long[] released) implements Request {
    public Release {
      checkReleased(released);
    }
  }

  private static void checkReleased(long[] released) {
    if (released.length > MAX_RELEASED) {
      throw new IllegalArgumentException(released.length + " bodies released in one frame; at most " + MAX_RELEASED);
    }
  }

  /** A response frame: a body or an error. */
  public record Response(Body body, String errorClass, String errorMessage, boolean fatal) {
    public static Response ok(Body body) {
      return new Response(body, null, null, false);
    }

    public static Response error(String errorClass, String message, boolean fatal) {
      return new Response(null, errorClass, message, fatal);
    }

    public boolean isOk() {
      return body != null;
    }
  }

  /** Raised for bytes that are not a frame of this format. */
  public static final class MalformedFrameException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    MalformedFrameException(String message) {
      super("malformed Sluice RPC frame: " + message);
    }
  }

  /**
   * The fields of a call frame from the client id to the caller's port, which every call of one
   * caller on one connection repeats: encoded once and copied into each call frame. Immutable.
   */
  public static final class CallerFields {
    private final byte[] encoded;

    public CallerFields(byte[] clientId, String protocol, String user, String realUser, String callerHost,
        int callerPort) {
      if (clientId.length > MAX_CLIENT_ID) {
        throw new IllegalArgumentException("client id of " + clientId.length + " bytes");
      }
      byte[] p = utf8(protocol);
      byte[] u = utf8(user);
      byte[] r = utf8(realUser == null ? "" : realUser);
      byte[] h = utf8(callerHost);
      ByteBuffer out = ByteBuffer.allocate(1 + clientId.length + 2 + p.length + 2 + u.length + 2 + r.length
          + 2 + h.length + 2);
      out.put((byte) clientId.length).put(clientId);
      putString(out, p);
      putString(out, u);
      putString(out, r);
      putString(out, h);
      out.putShort((short) callerPort);
      this.encoded = out.array();
    }
  }

  public static ByteBuffer encode(Request request) {
    if (request instanceof Release r) {
      ByteBuffer out = header(ByteBuffer.allocate(6 + 1 + 8 * r.released().length), TYPE_RELEASE);
      putReleased(out, r.released());
      return out.flip();
    }
    Call c = (Call) request;
    return encodeCall(c.callId(), c.retryCount(), new CallerFields(c.clientId(), c.protocol(), c.user(), c.realUser(),
        c.callerHost(), c.callerPort()), c.released(), c.body());
  }

  /** A call frame, as {@link #encode(Request)} writes a {@link Call} with these fields. */
  public static ByteBuffer encodeCall(int callId, int retryCount, CallerFields caller, long[] released, Body body) {
    ByteBuffer out = callStart(callId, retryCount, caller, released, bodySize(body));
    putBody(out, body);
    return out.flip();
  }

  /**
   * The start of a call frame with an inline body of {@code bodyLength} bytes, for a caller that
   * writes the body straight into the frame (a heap buffer with an accessible array): the buffer
   * is positioned where the body goes; write exactly {@code bodyLength} bytes, then flip it.
   */
  public static ByteBuffer inlineCall(int callId, int retryCount, CallerFields caller, long[] released,
      int bodyLength) {
    return callStart(callId, retryCount, caller, released, 1 + 4 + bodyLength).put(BODY_INLINE).putInt(bodyLength);
  }

  private static ByteBuffer callStart(int callId, int retryCount, CallerFields caller, long[] released,
      int bodySize) {
    checkReleased(released);
    ByteBuffer out = header(ByteBuffer.allocate(6 + 4 + 4 + caller.encoded.length + 1 + 8 * released.length
        + bodySize), TYPE_CALL);
    out.putInt(callId).putInt(retryCount).put(caller.encoded);
    putReleased(out, released);
    return out;
  }

  public static ByteBuffer encode(Response response) {
    if (response.isOk()) {
      ByteBuffer out = ByteBuffer.allocate(6 + bodySize(response.body()));
      out.putInt(MAGIC).put(VERSION).put(STATUS_OK);
      putBody(out, response.body());
      return out.flip();
    }
    byte[] errorClass = utf8(response.errorClass());
    byte[] message = response.errorMessage().getBytes(StandardCharsets.UTF_8);
    ByteBuffer out = ByteBuffer.allocate(6 + 2 + errorClass.length + 4 + message.length);
    out.putInt(MAGIC).put(VERSION).put(response.fatal() ? STATUS_FATAL : STATUS_ERROR);
    putString(out, errorClass);
    out.putInt(message.length).put(message);
    return out.flip();
  }

  /**
   * The start of an OK response with an inline body of {@code bodyLength} bytes, for a sender that
   * writes the body straight into the frame: the buffer is positioned where the body goes; write
   * exactly {@code bodyLength} bytes, then flip it.
   */
  public static ByteBuffer inlineResponse(int bodyLength) {
    ByteBuffer out = ByteBuffer.allocate(6 + 1 + 4 + bodyLength);
    return out.putInt(MAGIC).put(VERSION).put(STATUS_OK).put(BODY_INLINE).putInt(bodyLength);
  }

  /**
   * Decodes a request; inline bodies are views of {@code in}, valid as long as it is.
   *
   * @throws MalformedFrameException for anything else
   */
  public static Request decodeRequest(ByteBuffer in) throws MalformedFrameException {
    try {
      byte type = readHeader(in);
      Request r;
      if (type == TYPE_RELEASE) {
        r = new Release(getReleased(in));
      } else if (type == TYPE_CALL) {
        int callId = in.getInt();
        int retryCount = in.getInt();
        int idLength = in.get() & 0xff;
        if (idLength > MAX_CLIENT_ID) {
          throw new MalformedFrameException("client id of " + idLength + " bytes");
        }
        byte[] clientId = new byte[idLength];
        in.get(clientId);
        String protocol = getString(in);
        String user = getString(in);
        String realUser = getString(in);
        String host = getString(in);
        int port = in.getShort() & 0xffff;
        if (protocol.isEmpty() || user.isEmpty()) {
          throw new MalformedFrameException("a call needs a protocol and a user");
        }
        long[] released = getReleased(in);
        r = new Call(callId, retryCount, clientId, protocol, user, realUser.isEmpty() ? null : realUser,
            host, port, released, getBody(in));
      } else {
        throw new MalformedFrameException("unknown request type " + type);
      }
      if (in.hasRemaining()) {
        throw new MalformedFrameException(in.remaining() + " bytes after the end of the frame");
      }
      return r;
    } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
      throw new MalformedFrameException("truncated or inconsistent (" + e + ")");
    }
  }

  /** Decodes a response; an inline body is a view of {@code in}. */
  public static Response decodeResponse(ByteBuffer in) throws MalformedFrameException {
    try {
      byte status = readHeader(in);
      Response r;
      if (status == STATUS_OK) {
        r = Response.ok(getBody(in));
      } else if (status == STATUS_ERROR || status == STATUS_FATAL) {
        String errorClass = getString(in);
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
          throw new MalformedFrameException("error message of " + length + " bytes");
        }
        byte[] message = new byte[length];
        in.get(message);
        r = Response.error(errorClass, new String(message, StandardCharsets.UTF_8), status == STATUS_FATAL);
      } else {
        throw new MalformedFrameException("unknown response status " + status);
      }
      if (in.hasRemaining()) {
        throw new MalformedFrameException(in.remaining() + " bytes after the end of the frame");
      }
      return r;
    } catch (java.nio.BufferUnderflowException | IllegalArgumentException e) {
      throw new MalformedFrameException("truncated or inconsistent (" + e + ")");
    }
  }

  private static ByteBuffer header(ByteBuffer out, byte type) {
    return out.putInt(MAGIC).put(VERSION).put(type);
  }

  private static byte readHeader(ByteBuffer in) throws MalformedFrameException {
    if (in.remaining() < 6) {
      throw new MalformedFrameException("only " + in.remaining() + " bytes");
    }
    int magic = in.getInt();
    if (magic != MAGIC) {
      throw new MalformedFrameException(String.format("magic %08x", magic));
    }
    byte version = in.get();
    if (version != VERSION) {
      throw new MalformedFrameException("version " + version + ", expected " + VERSION);
    }
    return in.get();
  }

  private static void putReleased(ByteBuffer out, long[] released) {
    out.put((byte) released.length);
    for (long id : released) {
      out.putLong(id);
    }
  }

  private static long[] getReleased(ByteBuffer in) {
    long[] released = new long[in.get() & 0xff];
    for (int i = 0; i < released.length; i++) {
      released[i] = in.getLong();
    }
    return released;
  }

  private static int bodySize(Body body) {
    return 1 + (body instanceof Inline i ? 4 + i.length() : RemoteDescriptor.ENCODED_LENGTH + 4 + 8);
  }

  private static void putBody(ByteBuffer out, Body body) {
    if (body instanceof Inline i) {
      out.put(BODY_INLINE).putInt(i.length()).put(i.bytes().duplicate());
    } else {
      Remote r = (Remote) body;
      out.put(BODY_REMOTE);
      r.descriptor().encode(out);
      out.putInt(r.length()).putLong(r.id());
    }
  }

  private static Body getBody(ByteBuffer in) throws MalformedFrameException {
    byte kind = in.get();
    if (kind == BODY_INLINE) {
      int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        throw new MalformedFrameException("inline body of " + length + " bytes, " + in.remaining() + " left");
      }
      ByteBuffer bytes = in.slice(in.position(), length);
      in.position(in.position() + length);
      return new Inline(bytes);
    }
    if (kind == BODY_REMOTE) {
      RemoteDescriptor d = RemoteDescriptor.decode(in);
      int length = in.getInt();
      long id = in.getLong();
      return new Remote(d, length, id);
    }
    throw new MalformedFrameException("unknown body kind " + kind);
  }

  private static byte[] utf8(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) {
      throw new IllegalArgumentException("string of " + b.length + " bytes is too long for a frame");
    }
    return b;
  }

  private static void putString(ByteBuffer out, byte[] utf8) {
    out.putShort((short) utf8.length).put(utf8);
  }

  private static String getString(ByteBuffer in) throws MalformedFrameException {
    int length = in.getShort() & 0xffff;
    if (length > in.remaining()) {
      throw new MalformedFrameException("string of " + length + " bytes, " + in.remaining() + " left");
    }
    byte[] b = new byte[length];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
