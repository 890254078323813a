package org.apache.hadoop.ipc;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.thirdparty.protobuf.CodedOutputStream;
import org.apache.hadoop.thirdparty.protobuf.Message;

/**
 * How a {@link SluiceCall} ended: the response (a protobuf message, written length-delimited as
 * the stock engine writes it) or the server's exception class and message. The response is
 * written straight into the buffer that goes to the caller, inline or registered, with no copy in
 * between. Immutable.
 */
public final class SluiceCallOutcome {
  private final Message message; // the response, when it is a protobuf message
  private final byte[] bytes; // the response of any other Writable, already encoded
  private final String errorClass;
  private final String errorMessage;
  private final boolean fatal;

  private SluiceCallOutcome(Message message, byte[] bytes, String errorClass, String errorMessage, boolean fatal) {
    this.message = message;
    this.bytes = bytes;
    this.errorClass = errorClass;
    this.errorMessage = errorMessage;
    this.fatal = fatal;
  }

  static SluiceCallOutcome success(Writable value) throws IOException {
    if (value instanceof RpcWritable.ProtobufWrapper wrapper) {
      return new SluiceCallOutcome(wrapper.getMessage(), null, null, null, false);
    }
    return new SluiceCallOutcome(null, SluiceCalls.encodeValue(value), null, null, false);
  }

  /** An error outcome. */
  public static SluiceCallOutcome error(String errorClass, String message, boolean fatal) {
    return new SluiceCallOutcome(null, null, errorClass, message == null ? "" : message, fatal);
  }

  public boolean isSuccess() {
    return errorClass == null;
  }

  /** Bytes {@link #writeBody} writes. */
  public int bodyLength() {
    if (message != null) {
      int n = message.getSerializedSize();
      return CodedOutputStream.computeUInt32SizeNoTag(n) + n;
    }
    return bytes.length;
  }

  /** Writes the response body at the buffer's position and advances it by {@link #bodyLength()}. */
  public void writeBody(ByteBuffer out) throws IOException {
    if (message == null) {
      out.put(bytes);
      return;
    }
    int length = bodyLength();
    if (out.hasArray()) {
      CodedOutputStream coded = CodedOutputStream.newInstance(out.array(), out.arrayOffset() + out.position(), length);
      writeDelimited(coded);
      out.position(out.position() + length);
    } else {
      // protobuf encodes into a direct buffer a byte at a time (strings especially); encoding into
      // an array and copying that in bulk is several times faster.
      byte[] encoded = new byte[length];
      writeDelimited(CodedOutputStream.newInstance(encoded));
      out.put(encoded);
    }
  }

  private void writeDelimited(CodedOutputStream coded) throws IOException {
    coded.writeUInt32NoTag(message.getSerializedSize());
    message.writeTo(coded);
    coded.flush();
  }

  /** The exception's class name, or null on success. */
  public String errorClass() {
    return errorClass;
  }

  /** The exception's message as the stock server sends it, or null on success. */
  public String errorMessage() {
    return errorMessage;
  }

  /** Whether the stock server would close the connection after this error. */
  public boolean fatal() {
    return fatal;
  }
}
