package io.sluice.perf.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The spread of a benchmark's rounds: the smallest, the median ({@link Median}) and the largest
 * value, and how many there were. Immutable.
 */
public record Spread(double min, double median, double max, int count) {
  /**
   * The spread of {@code values}, which are not changed.
   *
   * @throws IllegalArgumentException if there are none
   */
  public static Spread of(double... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("the spread of no values");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return new Spread(sorted[0], Median.of(sorted), sorted[sorted.length - 1], sorted.length);
  }

  /** The spread of {@code values}; see {@link #of(double...)}. */
  public static Spread of(List<Double> values) {
    return of(values.stream().mapToDouble(Double::doubleValue).toArray());
  }

  /** {@code min / median / max}, each with {@code format} (for example {@code %.2f}). */
  public String format(String format) {
    return String.format(Locale.ROOT, format + " / " + format + " / " + format, min, median, max);
  }
}
