package io.sluice.perf.flight;

import java.nio.ByteBuffer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The one consumer every path of the Flight benchmark runs inside its timed part: it reads every
 * byte a batch delivers, as a sum of 64-bit little-endian words (a last partial word counts as if
 * zero-padded), so a path cannot look fast by handing over pointers, and so that zero copy is
 * measured as what a consumer sees. Batches are summed in order ({@code total * 31 + batch}); the
 * result is compared after the timed part. Not thread safe; one per stream.
 */
final class BodySum {
  private long total;
  private long batches;
  private long rows;

  /** Adds every buffer of every column of the batch now in {@code root} (buffers as its vectors size them). */
  void add(VectorSchemaRoot root) {
    long s = 0;
    for (FieldVector v : root.getFieldVectors()) {
      s += vector(v);
    }
    total = total * 31 + s;
    batches++;
    rows += root.getRowCount();
  }

  /** Adds {@code length} bytes at {@code address} as one batch. */
  void addRange(long address, long length) {
    total = total * 31 + range(address, length);
    batches++;
  }

  /** Adds the remaining bytes of a direct buffer as one batch. */
  void addRange(ByteBuffer direct) {
    addRange(MemoryUtil.getByteBufferAddress(direct) + direct.position(), direct.remaining());
  }

  private static long vector(FieldVector v) {
    long s = 0;
    for (ArrowBuf b : v.getFieldBuffers()) {
      s += range(b.memoryAddress(), b.readableBytes());
    }
    for (FieldVector child : v.getChildrenFromFields()) {
      s += vector(child);
    }
    return s;
  }

  private static long range(long address, long length) {
    long s = 0;
    long end = address + (length & ~7L);
    for (long a = address; a < end; a += 8) {
      s += MemoryUtil.getLong(a);
    }
    long tail = 0;
    for (long i = 0; i < (length & 7); i++) {
      tail |= (MemoryUtil.getByte(end + i) & 0xffL) << (8 * i);
    }
    return s + tail;
  }

  /** What was summed: the order-sensitive checksum, batches and rows. */
  record Value(long checksum, long batches, long rows) {}

  Value value() {
    return new Value(total, batches, rows);
  }
}
