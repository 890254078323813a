package io.sluice.perf.transport;

import io.sluice.perf.Measurement;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Prints measurements beside their baselines, with ratios and goals, as a plain-text table. Stateless. */
final class ResultTable {
  private ResultTable() {}

  static void print(PrintStream out, List<Measurement> results, List<Goal> goals, List<Integer> depths) {
    int nameWidth = width(results, true);
    int baseWidth = width(results, false);
    String row = "%-" + nameWidth + "s %10s %-5s  %-" + baseWidth + "s %10s %7s%n";
    out.printf(Locale.ROOT, row, "measurement", "value", "unit", "baseline", "baseline", "ratio");
    for (Measurement m : results) {
      out.printf(Locale.ROOT, row, m.name(), fmt(m.value()), m.unit(), m.baselineName(),
          fmt(m.baselineValue()), String.format(Locale.ROOT, "%.2f", m.ratio()));
    }
    out.println();
    out.println("goals (throughput: higher ratio is better; latency ratios are shown, not judged):");
    for (Goal g : goals) {
      Optional<Measurement> best = g.best(results, depths);
      if (best.isEmpty()) {
        out.printf(Locale.ROOT, "  %-40s not measured in this run%n", g.describe());
        continue;
      }
      Measurement m = best.get();
      out.printf(Locale.ROOT, "  %-40s %s: %.1f%% of %s -> %s%n", g.describe(), m.name(), m.ratio() * 100,
          m.baselineName(), m.ratio() >= g.minRatio() ? "MET" : "NOT MET");
    }
  }

  private static int width(List<Measurement> results, boolean names) {
    int w = 12;
    for (Measurement m : results) {
      w = Math.max(w, (names ? m.name() : m.baselineName()).length());
    }
    return w;
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, v >= 100 ? "%.1f" : "%.3f", v);
  }
}
