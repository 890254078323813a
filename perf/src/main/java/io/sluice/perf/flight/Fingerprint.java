package io.sluice.perf.flight;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * What a reader saw of a {@link BenchTable}, accumulated batch by batch so a broken path cannot
 * look fast: the row and batch counts, a hash of every value of the {@code id} column (summed, so
 * batches may be checked as they come), and the bytes of the {@code name} strings. Each batch is
 * also checked to continue where the last one ended ({@code id} is the row's position in the
 * table). Not thread safe.
 */
final class Fingerprint {
  private long rows;
  private long batches;
  private long idHash;
  private long nameBytes;

  /** The counts and hashes of a whole table; equal values mean the same rows arrived in order. */
  record Value(long rows, long batches, long idHash, long nameBytes) {
    /** One line of text, as the benchmark server announces its table. */
    String encode() {
      return rows + " " + batches + " " + Long.toHexString(idHash) + " " + nameBytes;
    }

    static Value decode(String[] fields, int from) {
      if (fields.length < from + 4) {
        throw new IllegalArgumentException("a table fingerprint needs 4 fields");
      }
      return new Value(Long.parseLong(fields[from]), Long.parseLong(fields[from + 1]),
          Long.parseUnsignedLong(fields[from + 2], 16), Long.parseLong(fields[from + 3]));
    }
  }

  /**
   * Adds the batch now in {@code root}.
   *
   * @throws IllegalStateException if the batch does not continue the table where the last one ended
   */
  void add(VectorSchemaRoot root) {
    int n = root.getRowCount();
    if (n > 0) {
      ArrowBuf ids = ((BigIntVector) root.getVector(BenchTable.ID)).getDataBuffer();
      long first = ids.getLong(0);
      long last = ids.getLong((long) (n - 1) * Long.BYTES);
      if (first != rows || last != rows + n - 1) {
        throw new IllegalStateException("batch " + batches + " holds ids " + first + ".." + last + ", expected "
            + rows + ".." + (rows + n - 1));
      }
      long h = 0;
      for (int i = 0; i < n; i++) {
        h += BenchTable.mix(ids.getLong((long) i * Long.BYTES));
      }
      idHash += h;
      ArrowBuf offsets = ((VarCharVector) root.getVector(BenchTable.NAME)).getOffsetBuffer();
      nameBytes += offsets.getInt((long) n * Integer.BYTES) - offsets.getInt(0);
    }
    rows += n;
    batches++;
  }

  Value value() {
    return new Value(rows, batches, idHash, nameBytes);
  }
}
