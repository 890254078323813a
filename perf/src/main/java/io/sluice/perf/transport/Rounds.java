package io.sluice.perf.transport;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs cells in interleaved rounds (every cell once per round, in order) so that a burst of
 * other load on the machine hits a measurement and its baseline alike. Throughput cells report
 * the median of their rounds; latency cells pool the samples of all rounds. Prints each cell's
 * result as it is known. Not thread safe.
 */
final class Rounds {
  /** A throughput measurement: warm up, then measure; returns GB/s. */
  @FunctionalInterface
  interface ThroughputCell {
    double run(Duration warmup, Duration measure) throws IOException;
  }

  /** A latency measurement: warm up, then add samples until the time is up or they are full. */
  @FunctionalInterface
  interface LatencyCell {
    void run(Duration warmup, Duration measure, LatencySamples samples) throws IOException;
  }

  private final BenchOptions options;
  private final PrintStream out;

  Rounds(BenchOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /** Median GB/s of each cell, by name, in the order given. */
  Map<String, Double> throughput(Map<String, ThroughputCell> cells) throws IOException {
    int rounds = options.rounds();
    Map<String, double[]> values = new LinkedHashMap<>();
    cells.keySet().forEach(name -> values.put(name, new double[rounds]));
    for (int r = 0; r < rounds; r++) {
      for (Map.Entry<String, ThroughputCell> c : cells.entrySet()) {
        values.get(c.getKey())[r] = c.getValue().run(options.warmup(), options.measure());
      }
    }
    Map<String, Double> medians = new LinkedHashMap<>();
    for (Map.Entry<String, double[]> v : values.entrySet()) {
      double[] sorted = v.getValue().clone();
      Arrays.sort(sorted);
      double median = sorted[sorted.length / 2];
      medians.put(v.getKey(), median);
      out.printf(Locale.ROOT, "  %-32s %10.3f %-4s  rounds %s%n", v.getKey(), median, Names.GBPS,
          format(v.getValue()));
    }
    out.flush();
    return medians;
  }

  /** The pooled samples of each cell, by name, in the order given. */
  Map<String, LatencySamples> latency(Map<String, LatencyCell> cells) throws IOException {
    Map<String, List<LatencySamples>> perRound = new LinkedHashMap<>();
    cells.keySet().forEach(name -> perRound.put(name, new ArrayList<>()));
    for (int r = 0; r < options.rounds(); r++) {
      for (Map.Entry<String, LatencyCell> c : cells.entrySet()) {
        LatencySamples s = new LatencySamples(options.maxLatencySamples());
        c.getValue().run(options.warmup(), options.measure(), s);
        perRound.get(c.getKey()).add(s);
      }
    }
    Map<String, LatencySamples> samples = new LinkedHashMap<>();
    perRound.forEach((name, list) -> samples.put(name, LatencySamples.pool(list)));
    for (Map.Entry<String, LatencySamples> s : samples.entrySet()) {
      LatencySamples l = s.getValue();
      out.printf(Locale.ROOT, "  %-32s p50 %8.2f %s  p99 %8.2f %s  (%d samples)%n", s.getKey(),
          l.micros(Percentile.P50), Names.MICROS, l.micros(Percentile.P99), Names.MICROS, l.count());
    }
    out.flush();
    return samples;
  }

  private static String format(double[] v) {
    StringBuilder b = new StringBuilder();
    for (double d : v) {
      b.append(b.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.3f", d));
    }
    return b.toString();
  }
}
