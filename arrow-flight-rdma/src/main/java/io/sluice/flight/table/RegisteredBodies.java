package io.sluice.flight.table;

import io.sluice.flight.memory.RegionBuffers;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.Checksums;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.DictionaryUtility;

/**
 * A published table's IPC bodies in registered memory: packed, 8-byte aligned, into segments of
 * at most {@link #SEGMENT_BYTES} (a larger body gets a segment of its own) that no peer may READ
 * until a stream grants its reader ({@link Transport#GRANTED_ONLY}). Each stream READs the same
 * memory, so serving copies nothing; the table's Arrow batches are views of it too.
 *
 * <p>Immutable once built; thread safe. {@link #close()} revokes the segments; their memory
 * lives until the last Arrow view of it is released.
 */
public final class RegisteredBodies implements AutoCloseable {
  /** Largest segment that packs several bodies. */
  static final long SEGMENT_BYTES = 256L << 20;
  /** First segment of a table whose size is not known in advance. */
  private static final long MIN_GROWING_SEGMENT = 1L << 20;

  /**
   * One body: the IPC metadata that describes it, where it lies, and the CRC32C of its bytes,
   * computed once when they were placed (or checked against the writer's when a put READ them),
   * which every announcement of the body carries to its reader.
   */
  public record Body(byte[] metadata, BodyRef ref, int crc32c) {}

  private final List<RegisteredRegion> segments;
  private final List<Body> dictionaries;
  private final List<Body> batches;

  private RegisteredBodies(List<RegisteredRegion> segments, List<Body> dictionaries, List<Body> batches) {
    this.segments = List.copyOf(segments);
    this.dictionaries = List.copyOf(dictionaries);
    this.batches = List.copyOf(batches);
  }

  public List<Body> dictionaries() {
    return dictionaries;
  }

  public List<Body> batches() {
    return batches;
  }

  /** Lets {@code peer} READ every segment until the returned grants are closed. */
  public List<ReaderGrant> allow(long peer) {
    List<ReaderGrant> grants = new ArrayList<>(segments.size());
    for (RegisteredRegion r : segments) {
      grants.add(r.allowReader(peer));
    }
    return grants;
  }

  /** Bytes of registered memory the segments hold. */
  public long registeredBytes() {
    return segments.stream().mapToLong(RegisteredRegion::length).sum();
  }

  @Override
  public void close() {
    segments.forEach(RegisteredRegion::close);
  }

  /**
   * Copies {@code source}'s bodies into registered segments of {@code transport} and returns the
   * table as views of them; releases the caller's reference to {@code source}.
   */
  static FlightTable register(FlightTable source, Transport transport, BufferAllocator allocator)
      throws TransportException {
    Packer packer = new Packer(transport, totalBytes(source));
    List<Body> dictionaryBodies = new ArrayList<>();
    List<Body> batchBodies = new ArrayList<>();
    try {
      for (ArrowDictionaryBatch d : source.dictionaries()) {
        dictionaryBodies.add(packer.place(d.getDictionary(), IpcBodies.metadata(d)));
      }
      for (ArrowRecordBatch b : source.batches()) {
        batchBodies.add(packer.place(b, IpcBodies.metadata(b)));
      }
    } catch (TransportException | RuntimeException e) {
      packer.segments.forEach(RegisteredRegion::close);
      throw e;
    }
    FlightTable table = views(source.schema(), source.messageSchema(), source.codec(),
        new RegisteredBodies(packer.segments, dictionaryBodies, batchBodies), allocator);
    source.release();
    return table;
  }

  /**
   * A table over bodies that already lie in registered memory of their own (a put READ them
   * there): {@code segments} are taken over, one per body of {@code dictionaries} then {@code
   * batches}, in that order. The schema is the IPC message schema the stream carried.
   */
  public static FlightTable adopt(Schema messageSchema, List<RegisteredRegion> segments, List<Body> dictionaries,
      List<Body> batches, BufferAllocator allocator) {
    Map<Long, Dictionary> scratch = new HashMap<>();
    List<Field> fields = new ArrayList<>();
    try {
      for (Field f : messageSchema.getFields()) {
        fields.add(DictionaryUtility.toMemoryFormat(f, allocator, scratch));
      }
    } finally {
      scratch.values().forEach(d -> d.getVector().close());
    }
    CompressionUtil.CodecType codec = batches.isEmpty()
        ? CompressionUtil.CodecType.NO_COMPRESSION : IpcBodies.codec(batches.get(0).metadata());
    return views(new Schema(fields, messageSchema.getCustomMetadata()), messageSchema, codec,
        new RegisteredBodies(segments, dictionaries, batches), allocator);
  }

  /** The table as Arrow batches that are views of the registered bodies (no copy). */
  private static FlightTable views(Schema schema, Schema messageSchema, CompressionUtil.CodecType codec,
      RegisteredBodies bodies, BufferAllocator allocator) {
    List<ArrowBuf> segmentBuffers = new ArrayList<>();
    List<ArrowDictionaryBatch> dictionaryViews = new ArrayList<>();
    List<ArrowRecordBatch> batchViews = new ArrayList<>();
    try {
      for (RegisteredRegion r : bodies.segments) {
        segmentBuffers.add(RegionBuffers.wrap(r, r.length(), allocator, () -> { }));
      }
      for (Body b : bodies.dictionaries) {
        dictionaryViews.add(IpcBodies.dictionaryBatch(b.metadata(), view(b, bodies.segments, segmentBuffers)));
      }
      for (Body b : bodies.batches) {
        batchViews.add(IpcBodies.recordBatch(b.metadata(), view(b, bodies.segments, segmentBuffers)));
      }
    } catch (RuntimeException e) {
      dictionaryViews.forEach(ArrowDictionaryBatch::close);
      batchViews.forEach(ArrowRecordBatch::close);
      segmentBuffers.forEach(ArrowBuf::close);
      bodies.close();
      throw e;
    }
    segmentBuffers.forEach(ArrowBuf::close); // the views keep their own references
    return FlightTable.of(schema, messageSchema, dictionaryViews, batchViews, codec, bodies);
  }

  /** The body as an ArrowBuf holding a reference of its own (what deserializing consumes). */
  private static ArrowBuf view(Body body, List<RegisteredRegion> segments, List<ArrowBuf> buffers) {
    for (int i = 0; i < segments.size(); i++) {
      if (segments.get(i).descriptor().equals(body.ref().region())) {
        ArrowBuf segment = buffers.get(i);
        segment.getReferenceManager().retain();
        return segment.slice(body.ref().offset(), body.ref().length());
      }
    }
    throw new IllegalStateException("body outside every segment");
  }

  private static long totalBytes(FlightTable t) {
    long n = 0;
    for (ArrowDictionaryBatch d : t.dictionaries()) {
      n += align(d.getDictionary().computeBodyLength());
    }
    for (ArrowRecordBatch b : t.batches()) {
      n += align(b.computeBodyLength());
    }
    return n;
  }

  private static long align(long n) {
    return (n + 7) & ~7L;
  }

  /**
   * Builds a registered table batch by batch, copying each body into registered segments as it
   * arrives (a put received over gRPC), so the put costs one table of memory, not two. Not thread
   * safe; closing an unbuilt collector frees the segments.
   */
  public static final class Collector implements AutoCloseable {
    private final BufferAllocator allocator;
    private final Schema schema;
    private final Schema messageSchema;
    private final Packer packer;
    private final List<Body> dictionaries = new ArrayList<>();
    private final List<Body> batches = new ArrayList<>();
    private boolean built;

    public Collector(Transport transport, BufferAllocator allocator, Schema schema, DictionaryProvider provider)
        throws TransportException {
      this.allocator = allocator;
      this.schema = schema;
      this.packer = new Packer(transport, -1);
      MessageForm form = MessageForm.of(schema, provider);
      this.messageSchema = form.messageSchema();
      try {
        for (ArrowDictionaryBatch d : form.dictionaries()) {
          dictionaries.add(packer.place(d.getDictionary(), IpcBodies.metadata(d)));
        }
      } catch (TransportException | RuntimeException e) {
        close();
        throw e;
      } finally {
        form.dictionaries().forEach(ArrowDictionaryBatch::close);
      }
    }

    /** Copies the root's current rows into registered memory as one batch. */
    public void add(VectorSchemaRoot root) throws TransportException {
      try (ArrowRecordBatch b = new VectorUnloader(root).getRecordBatch()) {
        batches.add(packer.place(b, IpcBodies.metadata(b)));
      }
    }

    public FlightTable build() {
      built = true;
      return views(schema, messageSchema, CompressionUtil.CodecType.NO_COMPRESSION,
          new RegisteredBodies(packer.segments, dictionaries, batches), allocator);
    }

    @Override
    public void close() {
      if (!built) {
        packer.segments.forEach(RegisteredRegion::close);
      }
    }
  }

  /** Places bodies one after another into segments it allocates. */
  private static final class Packer {
    private final Transport transport;
    private final List<RegisteredRegion> segments = new ArrayList<>();
    private long remaining;
    private long offset;

    /** {@code total}: the bytes to place, or -1 when unknown (segments then grow from 1 MiB). */
    Packer(Transport transport, long total) {
      this.transport = transport;
      this.remaining = total;
    }

    Body place(ArrowRecordBatch body, byte[] metadata) throws TransportException {
      long length = body.computeBodyLength();
      RegisteredRegion segment = segments.isEmpty() ? null : segments.get(segments.size() - 1);
      if (segment == null || offset + length > segment.length()) {
        segment = newSegment(length);
      }
      IpcBodies.writeBody(body, segment.buffer().position((int) offset));
      // The bytes never change from here on: their checksum is computed once, for every reader.
      int crc = Checksums.crc32c(segment.buffer(), (int) offset, (int) length);
      Body placed = new Body(metadata, new BodyRef(segment.descriptor(), offset, length), crc);
      offset += align(length);
      if (remaining >= 0) {
        remaining -= align(length);
      }
      return placed;
    }

    private RegisteredRegion newSegment(long length) throws TransportException {
      long want = remaining >= 0 ? remaining
          : Math.max(MIN_GROWING_SEGMENT, segments.isEmpty() ? 0 : 2 * segments.get(segments.size() - 1).length());
      long size = Math.max(align(length), Math.min(SEGMENT_BYTES, want));
      if (size > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
      }
      RegisteredRegion r = transport.allocateFor(Transport.GRANTED_ONLY, (int) Math.max(size, 8));
      segments.add(r);
      offset = 0;
      return r;
    }
  }
}
