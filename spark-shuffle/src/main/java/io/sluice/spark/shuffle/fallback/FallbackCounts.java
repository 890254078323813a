package io.sluice.spark.shuffle.fallback;

import io.sluice.spark.shuffle.fallback.Decision.Scope;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many decisions the {@link FallbackPolicy} made, by scope and outcome: those that chose the
 * transport ({@code decisions.<scope>.transport}) and those that chose Spark's sort shuffle, by
 * {@link FallbackReason} ({@code fallback.<scope>.<reason>}). Thread safe, lock free.
 */
public final class FallbackCounts {
  private final LongAdder[] transport = new LongAdder[Scope.values().length];
  private final LongAdder[] fallback = new LongAdder[FallbackReason.values().length];

  public FallbackCounts() {
    for (int i = 0; i < transport.length; i++) {
      transport[i] = new LongAdder();
    }
    for (int i = 0; i < fallback.length; i++) {
      fallback[i] = new LongAdder();
    }
  }

  void count(Decision d) {
    if (d.fallbackReason().isPresent()) {
      fallback[d.fallbackReason().get().ordinal()].increment();
    } else if (!d.usesSparkShuffle()) {
      transport[d.scope().ordinal()].increment();
    }
  }

  /** Every count by its metric name, the same names in the same order each time. */
  public Map<String, Long> snapshot() {
    Map<String, Long> m = new LinkedHashMap<>();
    for (Scope s : Scope.values()) {
      m.put("decisions." + s.metricName() + ".transport", transport[s.ordinal()].sum());
    }
    for (FallbackReason r : FallbackReason.values()) {
      m.put(r.metricName(), fallback[r.ordinal()].sum());
    }
    return m;
  }
}
