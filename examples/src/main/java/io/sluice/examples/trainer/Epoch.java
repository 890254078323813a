package io.sluice.examples.trainer;

import java.util.Map;

/**
 * What one training epoch measured: its mean log loss, time blocked waiting for the next shard
 * versus time computing, wall time, rows and bytes delivered, and the data paths the shards took.
 * Immutable.
 */
public record Epoch(int number, double loss, long waitMs, long computeMs, long wallMs, long rows, long bytes,
    Map<String, Integer> paths, long endMs) {

  /** Bytes delivered to the trainer per second of the epoch's wall time, in GB/s. */
  public double gbPerSecond() {
    return bytes / (Math.max(1, wallMs) / 1e3) / 1e9;
  }

  /** The share of the epoch the trainer sat waiting for data (what a GPU would idle). */
  public double waitShare() {
    return (double) waitMs / Math.max(1, wallMs);
  }

  @Override
  public String toString() {
    return String.format("epoch %d: %.3f GB/s delivered (%.1f MB, %,d rows in %.2f s over %s), waiting for data"
        + " %.0f%% of the time (%,d ms), computing %,d ms, loss %.5f", number, gbPerSecond(), bytes / 1e6, rows,
        wallMs / 1e3, paths.keySet(), 100 * waitShare(), waitMs, computeMs, loss);
  }
}
