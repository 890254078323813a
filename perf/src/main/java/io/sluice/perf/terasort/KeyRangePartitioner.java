package io.sluice.perf.terasort;

import org.apache.spark.Partitioner;

/**
 * Sends a key to the partition of its range: the key space is cut into equal ranges by the key's
 * first four bytes, so partition {@code p} holds only keys below those of partition {@code p + 1}.
 * TeraSort samples the input for its cut points; the generated keys are uniform, so equal ranges
 * are what sampling would find, and every reducer gets about the same share. Immutable.
 */
final class KeyRangePartitioner extends Partitioner {
  private static final long serialVersionUID = 1L;

  private final int partitions;

  KeyRangePartitioner(int partitions) {
    if (partitions < 1) {
      throw new IllegalArgumentException("partitions must be positive");
    }
    this.partitions = partitions;
  }

  @Override
  public int numPartitions() {
    return partitions;
  }

  @Override
  public int getPartition(Object key) {
    byte[] k = (byte[]) key;
    long prefix = ((k[0] & 0xFFL) << 24) | ((k[1] & 0xFFL) << 16) | ((k[2] & 0xFFL) << 8) | (k[3] & 0xFFL);
    return (int) ((prefix * partitions) >>> 32);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof KeyRangePartitioner p && p.partitions == partitions;
  }

  @Override
  public int hashCode() {
    return partitions;
  }
}
