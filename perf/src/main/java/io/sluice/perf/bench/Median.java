package io.sluice.perf.bench;

import java.util.Arrays;
import java.util.List;

/** The median of a benchmark's rounds: the middle value, or the mean of the two middle ones. Stateless. */
public final class Median {
  private Median() {}

  /**
   * The median of {@code values}, which are not changed.
   *
   * @throws IllegalArgumentException if there are none
   */
  public static double of(double... values) {
    if (values.length == 0) {
      throw new IllegalArgumentException("the median of no values");
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /** The median of {@code values}; see {@link #of(double...)}. */
  public static double of(List<Double> values) {
    return of(values.stream().mapToDouble(Double::doubleValue).toArray());
  }
}
