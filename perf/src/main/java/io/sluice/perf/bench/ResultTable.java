package io.sluice.perf.bench;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Prints measurements as a plain-text table: each figure, its unit, its baseline and the ratio of
 * the two, and where a benchmark ran rounds, every round of both. It prints what was measured and
 * nothing else. Stateless.
 */
public final class ResultTable {
  private ResultTable() {}

  /** The table without rounds. */
  public static void print(PrintStream out, List<Measurement> results) {
    print(out, results, Map.of());
  }

  /**
   * The table; {@code rounds} maps a measurement's or a baseline's name to its value in each round
   * (names missing from it get no rounds column entry).
   */
  public static void print(PrintStream out, List<Measurement> results, Map<String, double[]> rounds) {
    int nameWidth = width(results, true);
    int baseWidth = width(results, false);
    int unitWidth = 4;
    for (Measurement m : results) {
      unitWidth = Math.max(unitWidth, m.unit().length());
    }
    String row = "%-" + nameWidth + "s %10s %-" + unitWidth + "s  %-" + baseWidth + "s %10s %8s%s%n";
    boolean withRounds = !rounds.isEmpty();
    out.printf(Locale.ROOT, row, "measurement", "value", "unit", "baseline", "baseline", "ratio",
        withRounds ? "  rounds (value | baseline)" : "");
    for (Measurement m : results) {
      String perRound = !withRounds ? ""
          : "  " + format(rounds.get(m.name())) + " | " + format(rounds.get(m.baselineName()));
      out.printf(Locale.ROOT, row, m.name(), number(m.value()), m.unit(), m.baselineName(),
          number(m.baselineValue()), ratio(m), perRound);
    }
    out.flush();
  }

  /** A figure with three decimals, or one from 100 up. */
  public static String number(double v) {
    return String.format(Locale.ROOT, Math.abs(v) >= 100 ? "%.1f" : "%.3f", v);
  }

  private static String ratio(Measurement m) {
    double r = m.ratio();
    return Double.isInfinite(r) ? "-" : String.format(Locale.ROOT, "%.2fx", r);
  }

  private static int width(List<Measurement> results, boolean names) {
    int w = 12;
    for (Measurement m : results) {
      w = Math.max(w, (names ? m.name() : m.baselineName()).length());
    }
    return w;
  }

  private static String format(double[] values) {
    if (values == null) {
      return "-";
    }
    StringBuilder b = new StringBuilder();
    for (double d : values) {
      b.append(b.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.3f", d));
    }
    return b.toString();
  }
}
