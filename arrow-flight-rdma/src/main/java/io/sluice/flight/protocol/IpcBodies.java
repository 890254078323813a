package io.sluice.flight.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowMessage;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow IPC split the way the data plane carries it ("dissociated IPC"): a message's metadata
 * (the flatbuffer {@code Message}: field nodes, buffer layout, compression) travels in a frame,
 * its body (the buffers, 8-byte aligned, laid out as the metadata says) lies in registered memory
 * and is READ. Both halves are Arrow's own IPC encoding, so nothing here defines a format of its
 * own. Stateless and thread safe.
 */
public final class IpcBodies {
  private IpcBodies() {}

  /** The metadata of a record batch or dictionary batch. */
  public static byte[] metadata(ArrowMessage message) {
    return toArray(MessageSerializer.serializeMetadata(message, IpcOption.DEFAULT));
  }

  public static byte[] schemaMetadata(Schema schema) {
    return toArray(MessageSerializer.serializeMetadata(schema, IpcOption.DEFAULT));
  }

  public static Schema schema(byte[] metadata) {
    Message m = parse(metadata, MessageHeader.Schema);
    try {
      return MessageSerializer.deserializeSchema(m);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("malformed schema metadata: " + e, e);
    }
  }

  /**
   * The same batch with its buffers laid out 8-byte aligned in the body (each padded to a
   * multiple of 8), as the IPC format asks; Arrow Java's {@code cloneWithTransfer} drops that.
   * Takes its own references to the buffers: the caller still closes {@code batch}.
   */
  public static ArrowRecordBatch aligned(ArrowRecordBatch batch) {
    return new ArrowRecordBatch(batch.getLength(), batch.getNodes(), batch.getBuffers(), batch.getBodyCompression(),
        batch.getVariadicBufferCounts(), true);
  }

  /** Body length of a record batch: its buffers with their alignment padding. */
  public static long bodyLength(ArrowRecordBatch batch) {
    return batch.computeBodyLength();
  }

  /**
   * Writes the body of {@code batch} at the position of {@code target} (one copy) and advances it.
   *
   * @throws IllegalArgumentException if the target has less room than {@link #bodyLength}
   */
  public static void writeBody(ArrowRecordBatch batch, ByteBuffer target) {
    long length = batch.computeBodyLength();
    if (length > target.remaining()) {
      throw new IllegalArgumentException("body of " + length + " bytes, room for " + target.remaining());
    }
    int start = target.position();
    try {
      MessageSerializer.writeBatchBuffers(new WriteChannel(new BufferSink(target)), batch);
    } catch (IOException e) {
      throw new IllegalStateException("writing into memory failed", e);
    }
    if (target.position() - start != length) {
      throw new IllegalStateException("body wrote " + (target.position() - start) + " bytes, layout says " + length);
    }
  }

  /**
   * The record batch that {@code metadata} describes, its buffers sliced from {@code body}. Takes
   * over the caller's reference to {@code body}, except when it throws.
   */
  public static ArrowRecordBatch recordBatch(byte[] metadata, ArrowBuf body) {
    Message m = parse(metadata, MessageHeader.RecordBatch);
    RecordBatch rb = (RecordBatch) m.header(new RecordBatch());
    checkBuffers(rb, body.capacity());
    try {
      return MessageSerializer.deserializeRecordBatch(rb, body);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("malformed record batch metadata: " + e, e);
    }
  }

  /**
   * The dictionary batch that {@code metadata} describes, its buffers sliced from {@code body}.
   * Takes over the caller's reference to {@code body}, except when it throws.
   */
  public static ArrowDictionaryBatch dictionaryBatch(byte[] metadata, ArrowBuf body) {
    Message m = parse(metadata, MessageHeader.DictionaryBatch);
    org.apache.arrow.flatbuf.DictionaryBatch db =
        (org.apache.arrow.flatbuf.DictionaryBatch) m.header(new org.apache.arrow.flatbuf.DictionaryBatch());
    if (db == null || db.data() == null) {
      throw new IllegalArgumentException("dictionary batch metadata without data");
    }
    checkBuffers(db.data(), body.capacity());
    try {
      return MessageSerializer.deserializeDictionaryBatch(m, body);
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("malformed dictionary batch metadata: " + e, e);
    }
  }

  /** The codec a record batch's metadata names for its buffers. */
  public static CompressionUtil.CodecType codec(byte[] metadata) {
    RecordBatch rb = (RecordBatch) parse(metadata, MessageHeader.RecordBatch).header(new RecordBatch());
    org.apache.arrow.flatbuf.BodyCompression c = rb.compression();
    return c == null ? CompressionUtil.CodecType.NO_COMPRESSION : CompressionUtil.CodecType.fromCompressionType(c.codec());
  }

  /** The body length that {@code metadata} declares. */
  public static long declaredBodyLength(byte[] metadata) {
    try {
      return Message.getRootAsMessage(ByteBuffer.wrap(metadata)).bodyLength();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("malformed IPC metadata: " + e, e);
    }
  }

  private static Message parse(byte[] metadata, byte expectedHeader) {
    Message m;
    try {
      m = Message.getRootAsMessage(ByteBuffer.wrap(metadata));
      if (m.headerType() != expectedHeader) {
        throw new IllegalArgumentException("IPC message is a " + MessageHeader.name(m.headerType())
            + ", expected a " + MessageHeader.name(expectedHeader));
      }
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("malformed IPC metadata: " + e, e);
    }
    return m;
  }

  /** Every buffer the metadata names must lie inside the body that was READ. */
  private static void checkBuffers(RecordBatch rb, long bodyLength) {
    try {
      for (int i = 0; i < rb.buffersLength(); i++) {
        org.apache.arrow.flatbuf.Buffer b = rb.buffers(i);
        long end = b.offset() + b.length();
        if (b.offset() < 0 || b.length() < 0 || end < 0 || end > bodyLength) {
          throw new IllegalArgumentException("buffer " + i + " [" + b.offset() + ", +" + b.length()
              + ") outside a body of " + bodyLength + " bytes");
        }
      }
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("malformed record batch metadata: " + e, e);
    }
  }

  private static byte[] toArray(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  /** A channel that appends to a buffer. */
  private static final class BufferSink implements WritableByteChannel {
    private final ByteBuffer target;

    BufferSink(ByteBuffer target) {
      this.target = target;
    }

    @Override
    public int write(ByteBuffer src) {
      int n = src.remaining();
      target.put(src);
      return n;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
