package io.sluice.flight.table;

import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

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

  /** One body: the IPC metadata that describes it, and where it lies. */
  public record Body(byte[] metadata, BodyRef ref) {}

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
    Packer packer = new Packer(transport, allocator, totalBytes(source));
    List<ArrowDictionaryBatch> dictionaryViews = new ArrayList<>();
    List<ArrowRecordBatch> batchViews = new ArrayList<>();
    List<Body> dictionaryBodies = new ArrayList<>();
    List<Body> batchBodies = new ArrayList<>();
    try {
      for (ArrowDictionaryBatch d : source.dictionaries()) {
        Body body = packer.place(d.getDictionary(), IpcBodies.metadata(d));
        dictionaryBodies.add(body);
        dictionaryViews.add(IpcBodies.dictionaryBatch(body.metadata(), packer.view(body)));
      }
      for (ArrowRecordBatch b : source.batches()) {
        Body body = packer.place(b, IpcBodies.metadata(b));
        batchBodies.add(body);
        batchViews.add(IpcBodies.recordBatch(body.metadata(), packer.view(body)));
      }
    } catch (TransportException | RuntimeException e) {
      dictionaryViews.forEach(ArrowDictionaryBatch::close);
      batchViews.forEach(ArrowRecordBatch::close);
      packer.closeAll();
      throw e;
    }
    RegisteredBodies bodies = new RegisteredBodies(packer.segments, dictionaryBodies, batchBodies);
    packer.releaseViews();
    FlightTable table = FlightTable.of(source.schema(), source.messageSchema(), dictionaryViews, batchViews,
        source.codec(), bodies);
    source.release();
    return table;
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

  /** Places bodies into segments; keeps one ArrowBuf per segment for the views while packing. */
  private static final class Packer {
    private final Transport transport;
    private final BufferAllocator allocator;
    private final List<RegisteredRegion> segments = new ArrayList<>();
    private final List<ArrowBuf> segmentBuffers = new ArrayList<>();
    private long remaining;
    private long offset;

    Packer(Transport transport, BufferAllocator allocator, long total) {
      this.transport = transport;
      this.allocator = allocator;
      this.remaining = total;
    }

    Body place(ArrowRecordBatch body, byte[] metadata) throws TransportException {
      long length = body.computeBodyLength();
      RegisteredRegion segment = segments.isEmpty() ? null : segments.get(segments.size() - 1);
      if (segment == null || offset + length > segment.length()) {
        segment = newSegment(length);
      }
      IpcBodies.writeBody(body, segment.buffer().position((int) offset));
      Body placed = new Body(metadata, new BodyRef(segment.descriptor(), offset, length));
      offset += align(length);
      remaining -= align(length);
      return placed;
    }

    /** A view of the body as an ArrowBuf of its own reference (what deserializing consumes). */
    ArrowBuf view(Body body) {
      int i = segmentIndex(body);
      ArrowBuf segment = segmentBuffers.get(i);
      segment.getReferenceManager().retain();
      return segment.slice(body.ref().offset(), body.ref().length());
    }

    private int segmentIndex(Body body) {
      for (int i = segments.size() - 1; i >= 0; i--) {
        if (segments.get(i).descriptor().equals(body.ref().region())) {
          return i;
        }
      }
      throw new IllegalStateException("body outside every segment");
    }

    private RegisteredRegion newSegment(long length) throws TransportException {
      long size = Math.max(align(length), Math.min(SEGMENT_BYTES, remaining));
      if (size > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
      }
      RegisteredRegion r = transport.allocateFor(Transport.GRANTED_ONLY, (int) Math.max(size, 8));
      segments.add(r);
      offset = 0;
      r.retain(); // the Arrow views' reference: memory outlives the revocation
      long address = MemoryUtil.getByteBufferAddress(r.buffer());
      segmentBuffers.add(allocator.wrapForeignAllocation(new ForeignAllocation(r.length(), address) {
        @Override
        protected void release0() {
          r.release();
        }
      }));
      return r;
    }

    /** Drops the packer's own reference to each segment's buffer; the views keep theirs. */
    void releaseViews() {
      segmentBuffers.forEach(ArrowBuf::close);
    }

    void closeAll() {
      releaseViews();
      segments.forEach(RegisteredRegion::close);
    }
  }
}
