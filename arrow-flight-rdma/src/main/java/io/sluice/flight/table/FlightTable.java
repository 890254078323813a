package io.sluice.flight.table;

import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.memory.AbstractReferenceCounted;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A table a server publishes: a schema, its dictionaries and a sequence of record batches, held
 * as Arrow IPC messages whose buffers the table owns (a reference each, so the producer may reuse
 * or close its vectors after adding them). Served to any number of streams at once; each stream
 * {@link #retain()}s it, so a table replaced or removed while being read lives until its last
 * stream ends.
 *
 * <p>Immutable once built, hence thread safe; reference counting follows {@link
 * AbstractReferenceCounted} (starts at 1, freed at 0).
 */
public final class FlightTable extends AbstractReferenceCounted implements AutoCloseable {
  private final Schema schema;
  private final Schema messageSchema;
  private final List<ArrowDictionaryBatch> dictionaries;
  private final List<ArrowRecordBatch> batches;
  private final CompressionUtil.CodecType codec;
  private final long rows;
  private final long bodyBytes;
  private final java.util.Optional<RegisteredBodies> registered;

  private FlightTable(Schema schema, Schema messageSchema, List<ArrowDictionaryBatch> dictionaries,
      List<ArrowRecordBatch> batches, CompressionUtil.CodecType codec, RegisteredBodies registered) {
    this.schema = schema;
    this.messageSchema = messageSchema;
    this.dictionaries = List.copyOf(dictionaries);
    this.batches = List.copyOf(batches);
    this.codec = codec;
    this.registered = java.util.Optional.ofNullable(registered);
    this.rows = this.batches.stream().mapToLong(ArrowRecordBatch::getLength).sum();
    this.bodyBytes = this.batches.stream().mapToLong(ArrowRecordBatch::computeBodyLength).sum();
  }

  /** A table whose batches are views of {@code registered}'s memory; takes ownership of all. */
  static FlightTable of(Schema schema, Schema messageSchema, List<ArrowDictionaryBatch> dictionaries,
      List<ArrowRecordBatch> batches, CompressionUtil.CodecType codec, RegisteredBodies registered) {
    return new FlightTable(schema, messageSchema, dictionaries, batches, codec, registered);
  }

  /**
   * This table with its bodies copied into memory registered with {@code transport}, readable by
   * no peer until a stream grants it; releases the caller's reference to this table.
   */
  public FlightTable register(io.sluice.transport.Transport transport, BufferAllocator allocator)
      throws io.sluice.transport.TransportException {
    return RegisteredBodies.register(this, transport, allocator);
  }

  /** The registered bodies, when the table was {@link #register}ed. */
  public java.util.Optional<RegisteredBodies> registered() {
    return registered;
  }

  /**
   * Starts a table of {@code schema} (the in-memory schema: dictionary-encoded fields carry their
   * index type) whose dictionaries {@code dictionaries} provides; pass an empty provider when no
   * field is dictionary-encoded.
   */
  public static Builder builder(Schema schema, DictionaryProvider dictionaries) {
    return new Builder(schema, dictionaries);
  }

  /** The in-memory schema: what a reader's {@code VectorSchemaRoot} has. */
  public Schema schema() {
    return schema;
  }

  /** The schema as Arrow IPC carries it: dictionary-encoded fields carry their value type. */
  public Schema messageSchema() {
    return messageSchema;
  }

  public List<ArrowDictionaryBatch> dictionaries() {
    return dictionaries;
  }

  public List<ArrowRecordBatch> batches() {
    return batches;
  }

  /** The codec the batches' buffers are compressed with ({@code NO_COMPRESSION} if none). */
  public CompressionUtil.CodecType codec() {
    return codec;
  }

  public long rows() {
    return rows;
  }

  /** Bytes of record batch bodies: what a reader moves. */
  public long bodyBytes() {
    return bodyBytes;
  }

  @Override
  public FlightTable retain() {
    super.retain();
    return this;
  }

  /** Releases the buffers once the last reference is gone. */
  @Override
  protected void deallocate() {
    registered.ifPresent(RegisteredBodies::close);
    dictionaries.forEach(ArrowDictionaryBatch::close);
    batches.forEach(ArrowRecordBatch::close);
  }

  @Override
  public String toString() {
    return "FlightTable[" + rows + " rows in " + batches.size() + " batches, " + bodyBytes + " body bytes"
        + (registered.isPresent() ? ", registered" : "") + "]";
  }

  /** Drops the publisher's reference. */
  @Override
  public void close() {
    release();
  }

  /** Collects batches; not thread safe. Closing an unbuilt builder frees what it collected. */
  public static final class Builder implements AutoCloseable {
    private final Schema schema;
    private final Schema messageSchema;
    private final List<ArrowDictionaryBatch> dictionaries = new ArrayList<>();
    private final List<ArrowRecordBatch> batches = new ArrayList<>();
    private CompressionUtil.CodecType codec = CompressionUtil.CodecType.NO_COMPRESSION;
    private boolean built;

    private Builder(Schema schema, DictionaryProvider provider) {
      this.schema = schema;
      MessageForm form = MessageForm.of(schema, provider);
      this.messageSchema = form.messageSchema();
      this.dictionaries.addAll(form.dictionaries());
    }

    /** Compresses record batch buffers added from now on (LZ4_FRAME or ZSTD), as Arrow IPC allows. */
    public Builder compression(CompressionUtil.CodecType type) {
      this.codec = type;
      return this;
    }

    /**
     * Adds the root's current rows as one batch. The table takes references to the root's
     * buffers, not copies: refill the root only after {@code allocateNew()} or {@code clear()}
     * (as Arrow's own unloaders expect), never by overwriting values in place.
     */
    public Builder add(VectorSchemaRoot root) {
      if (!root.getSchema().equals(schema)) {
        throw new IllegalArgumentException("batch schema " + root.getSchema() + " differs from the table's " + schema);
      }
      CompressionCodec c = codec == CompressionUtil.CodecType.NO_COMPRESSION
          ? NoCompressionCodec.INSTANCE : CommonsCompressionFactory.INSTANCE.createCodec(codec);
      ArrowRecordBatch batch = new VectorUnloader(root, true, c, true).getRecordBatch();
      if (root.getFieldVectors().isEmpty()) {
        batches.add(batch);
      } else {
        // Buffer objects of our own (same memory): resetting the root's row count moves the
        // indexes of the vectors' buffer objects, and must not move ours.
        // cloneWithTransfer forgets the alignment: lay the buffers out 8-byte aligned again, as the
        // IPC format asks and as readers such as Arrow C++ (pyarrow) require of a body.
        try (ArrowRecordBatch moved = batch.cloneWithTransfer(root.getFieldVectors().get(0).getAllocator())) {
          batches.add(IpcBodies.aligned(moved));
        }
      }
      return this;
    }

    public FlightTable build() {
      built = true;
      return new FlightTable(schema, messageSchema, dictionaries, batches, codec, null);
    }

    @Override
    public void close() {
      if (!built) {
        dictionaries.forEach(ArrowDictionaryBatch::close);
        batches.forEach(ArrowRecordBatch::close);
      }
    }
  }
}
