package io.sluice.examples.trainer;

import java.util.Map;

/**
 * What one training epoch measured: its mean log loss, time blocked waiting for the next batch
 * versus time computing, wall time, rows and bytes read, the Flight read rate and the data paths
 * the streams took. Immutable.
 */
public record Epoch(int number, double loss, long waitMs, long computeMs, long wallMs, long rows, long bytes,
    double flightGbPerSecond, Map<String, Integer> paths, long endMs) {

  @Override
  public String toString() {
    return String.format("epoch %d: loss %.5f, waited for data %,d ms, computed %,d ms (%,d rows, %.1f MB,"
        + " Flight %.2f GB/s over %s)", number, loss, waitMs, computeMs, rows, bytes / 1e6, flightGbPerSecond,
        paths.keySet());
  }
}
