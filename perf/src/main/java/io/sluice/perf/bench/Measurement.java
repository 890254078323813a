package io.sluice.perf.bench;

import java.util.Objects;

/**
 * One benchmark figure beside the baseline it is judged against, both measured in the same run
 * and in the same unit. For example {@code tcp.read.1MiB.inflight8} in GB/s beside {@code
 * socket.stream.1MiB}. Immutable.
 *
 * @param name what was measured, dot-separated, unique within one results file
 * @param unit the unit of both values, for example {@code GB/s} or {@code us}
 * @param value the measured figure
 * @param baselineName what the baseline is, in the same naming scheme
 * @param baselineValue the baseline figure, in {@code unit}
 */
public record Measurement(String name, String unit, double value, String baselineName, double baselineValue) {
  public Measurement {
    requireText(name, "name");
    requireText(unit, "unit");
    requireText(baselineName, "baselineName");
    requireFinite(value, "value of " + name);
    requireFinite(baselineValue, "baseline value of " + name);
  }

  /** {@code value / baselineValue}; positive infinity when the baseline is zero and the value is not. */
  public double ratio() {
    if (baselineValue == 0) {
      return value == 0 ? 1.0 : Double.POSITIVE_INFINITY;
    }
    return value / baselineValue;
  }

  private static void requireText(String s, String what) {
    Objects.requireNonNull(s, what);
    if (s.isBlank()) {
      throw new IllegalArgumentException(what + " must not be blank");
    }
  }

  private static void requireFinite(double v, String what) {
    if (!Double.isFinite(v)) {
      throw new IllegalArgumentException(what + " must be a finite number, got " + v);
    }
  }
}
