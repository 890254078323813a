package io.sluice.perf.flight;

import io.sluice.perf.Measurement;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Prints the Flight benchmark's measurements beside the gRPC baseline, with ratios, every round,
 * and the goals of issue 9 judged as met or missed. Stateless.
 */
final class FlightResultTable {
  private FlightResultTable() {}

  static void print(PrintStream out, List<Measurement> results, Map<String, double[]> rounds) {
    String row = "%-16s %8s %-5s %-16s %8s %7s  %s%n";
    out.printf(Locale.ROOT, row, "measurement", "value", "unit", "baseline", "baseline", "ratio", "rounds (value | baseline)");
    for (Measurement m : results) {
      out.printf(Locale.ROOT, row, m.name(), fmt(m.value()), m.unit(), m.baselineName(), fmt(m.baselineValue()),
          String.format(Locale.ROOT, "%.2fx", m.ratio()),
          format(rounds.get(m.name())) + " | " + format(rounds.get(m.baselineName())));
    }
    out.println();
    out.println("goals of issue 9 (the data plane against gRPC Flight on this machine):");
    for (Measurement m : results) {
      String provider = m.name().substring(m.name().lastIndexOf('.') + 1);
      Double goal = FlightBench.GOALS.get(provider);
      if (goal == null) {
        continue;
      }
      out.printf(Locale.ROOT, "  %-16s >= %4.1fx %-16s  %6.2fx  %s%n", m.name(), goal, m.baselineName(), m.ratio(),
          m.ratio() >= goal ? "met" : "MISSED");
    }
    out.flush();
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }

  private static String format(double[] v) {
    StringBuilder b = new StringBuilder();
    for (double d : v) {
      b.append(b.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.3f", d));
    }
    return b.toString();
  }
}
