package io.sluice.transport.metrics;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * A latency histogram with fixed buckets: powers of two of microseconds, from 1 µs to {@link
 * #BOUNDS_MICROS}'s last (about a second), and one bucket above. Recording is a bucket index
 * and two {@link LongAdder} increments: no lock, no allocation, so it may sit on the READ path.
 *
 * <p>Thread safe. A snapshot read while others record may be off by the few records in progress.
 */
public final class LatencyHistogram {
  /** The upper bounds of the buckets, in microseconds; the last bucket holds everything above. */
  public static final long[] BOUNDS_MICROS = bounds(21);

  private final LongAdder[] buckets = new LongAdder[BOUNDS_MICROS.length + 1];
  private final LongAdder sumMicros = new LongAdder();

  public LatencyHistogram() {
    for (int i = 0; i < buckets.length; i++) {
      buckets[i] = new LongAdder();
    }
  }

  private static long[] bounds(int n) {
    long[] b = new long[n];
    for (int i = 0; i < n; i++) {
      b[i] = 1L << i;
    }
    return b;
  }

  /** Records one latency of {@code nanos} (negative counts as 0). */
  public void record(long nanos) {
    long micros = Math.max(0, TimeUnit.NANOSECONDS.toMicros(nanos));
    buckets[bucketOf(micros)].increment();
    sumMicros.add(micros);
  }

  /** The bucket {@code micros} falls in: the first whose bound is at least it. */
  static int bucketOf(long micros) {
    if (micros <= 1) {
      return 0;
    }
    int i = 64 - Long.numberOfLeadingZeros(micros - 1); // ceil(log2(micros))
    return Math.min(i, BOUNDS_MICROS.length);
  }

  /** What was recorded so far. */
  public Snapshot snapshot() {
    long[] counts = new long[buckets.length];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = buckets[i].sum();
    }
    return new Snapshot(counts, sumMicros.sum());
  }

  /**
   * Counts per bucket (the last one above every bound) and the sum of all latencies recorded.
   */
  public record Snapshot(long[] counts, long sumMicros) {
    public long count() {
      long n = 0;
      for (long c : counts) {
        n += c;
      }
      return n;
    }

    /** Latencies of at most {@code BOUNDS_MICROS[bucket]}: a Prometheus-style cumulative bucket. */
    public long cumulative(int bucket) {
      long n = 0;
      for (int i = 0; i <= bucket; i++) {
        n += counts[i];
      }
      return n;
    }

    /**
     * The bound of the bucket that holds quantile {@code q} (0 < q <= 1), in microseconds: an upper
     * estimate within a factor of two; 0 with nothing recorded, and twice the last bound above it.
     */
    public long quantileMicros(double q) {
      if (!(q > 0 && q <= 1)) {
        throw new IllegalArgumentException("quantile must be in (0, 1], got " + q);
      }
      long total = count();
      if (total == 0) {
        return 0;
      }
      long rank = (long) Math.ceil(q * total);
      long seen = 0;
      for (int i = 0; i < counts.length; i++) {
        seen += counts[i];
        if (seen >= rank) {
          return i < BOUNDS_MICROS.length ? BOUNDS_MICROS[i] : 2 * BOUNDS_MICROS[BOUNDS_MICROS.length - 1];
        }
      }
      return 2 * BOUNDS_MICROS[BOUNDS_MICROS.length - 1];
    }
  }
}
