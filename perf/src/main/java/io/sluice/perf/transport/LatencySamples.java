package io.sluice.perf.transport;

import java.util.Arrays;
import java.util.List;

/** A bounded list of latency samples in nanoseconds. Not thread safe. */
final class LatencySamples {
  private final long[] nanos;
  private int count;

  LatencySamples(int capacity) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity must be positive, got " + capacity);
    }
    this.nanos = new long[capacity];
  }

  /** All samples of {@code parts} in one list. */
  static LatencySamples pool(List<LatencySamples> parts) {
    int total = 0;
    for (LatencySamples p : parts) {
      total += p.count;
    }
    LatencySamples all = new LatencySamples(Math.max(1, total));
    for (LatencySamples p : parts) {
      System.arraycopy(p.nanos, 0, all.nanos, all.count, p.count);
      all.count += p.count;
    }
    return all;
  }

  void add(long sampleNanos) {
    if (count == nanos.length) {
      throw new IllegalStateException("latency samples full at " + count);
    }
    nanos[count++] = sampleNanos;
  }

  boolean isFull() {
    return count == nanos.length;
  }

  int count() {
    return count;
  }

  /** The percentile in microseconds. @throws IllegalArgumentException when there are no samples */
  double micros(Percentile p) {
    long[] sorted = Arrays.copyOf(nanos, count);
    Arrays.sort(sorted);
    return p.of(sorted, count) / 1_000.0;
  }
}
