package io.sluice.perf.transport;

/** The latency percentiles the benchmark reports. */
enum Percentile {
  P50(0.50),
  P99(0.99);

  private final double fraction;

  Percentile(double fraction) {
    this.fraction = fraction;
  }

  String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Nearest-rank percentile of {@code sorted}, which must be non-empty and ascending. */
  long of(long[] sorted, int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("no samples");
    }
    int rank = (int) Math.ceil(fraction * count);
    return sorted[Math.max(0, rank - 1)];
  }
}
