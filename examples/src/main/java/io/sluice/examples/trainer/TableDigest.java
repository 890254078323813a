package io.sluice.examples.trainer;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * An order-independent digest of the feature table's rows (user_id, label, f0..fn): the sum over
 * rows of a mix of each value's bits. Two readers that saw the same rows, in any order and split
 * into any batches, end with the same digest. Not thread safe.
 */
public final class TableDigest {
  private long rows;
  private long sum;

  public void add(VectorSchemaRoot batch) {
    BigIntVector user = (BigIntVector) batch.getVector(0);
    int columns = batch.getFieldVectors().size();
    for (int r = 0; r < batch.getRowCount(); r++) {
      long h = mix(user.get(r));
      for (int c = 1; c < columns; c++) {
        h = mix(h ^ Double.doubleToRawLongBits(((Float8Vector) batch.getVector(c)).get(r)));
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
