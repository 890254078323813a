package io.sluice.examples.trainer;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;

/**
 * An order-independent digest of the feature table's rows (user_id, label, f0..fn, the dense
 * block, a list of float32 as Spark's arrays arrive in Arrow): the sum over rows of a mix of each
 * value's bits. Two readers that saw the same rows, in any order and split into any batches, end
 * with the same digest. Not thread safe.
 */
public final class TableDigest {
  private long rows;
  private long sum;

  public void add(VectorSchemaRoot batch) {
    BigIntVector user = (BigIntVector) batch.getVector(0);
    var vectors = batch.getFieldVectors();
    for (int r = 0; r < batch.getRowCount(); r++) {
      long h = mix(user.get(r));
      for (int c = 1; c < vectors.size(); c++) {
        FieldVector v = vectors.get(c);
        if (v instanceof Float8Vector f) {
          h = mix(h ^ Double.doubleToRawLongBits(f.get(r)));
        } else if (v instanceof ListVector list) {
          ArrowBuf offsets = list.getOffsetBuffer();
          ArrowBuf values = list.getDataVector().getDataBuffer();
          int end = offsets.getInt((long) (r + 1) * ListVector.OFFSET_WIDTH);
          for (int at = offsets.getInt((long) r * ListVector.OFFSET_WIDTH); at < end; at++) {
            h = mix(h ^ values.getInt((long) at * Float.BYTES));
          }
        } else {
          throw new IllegalArgumentException("the digest does not cover column " + v.getField());
        }
      }
      sum += h;
    }
    rows += batch.getRowCount();
  }

  public long rows() {
    return rows;
  }

  /** The digest as 16 hex digits. */
  public String value() {
    return String.format("%016x", sum);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }
}
