package io.sluice.perf.spark;

import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.spark.shuffle.TransportReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.TransportReports;

/**
 * What starting RdmaShuffleManager's transport cost on each executor of each application the
 * benchmark ran: how long the first task that needed it waited for the open, how long the open
 * took on its own thread (the first map task computes meanwhile), and the median
 * first connection to a peer (connect, authenticate, attach shm), from each executor's {@link
 * TransportReport}. Reported as medians over every executor of every round. Spark's sort shuffle
 * has no such step to measure, so each is given beside the sort shuffle's cold job of the same
 * variant in the same run (in ms): the ratio is the share of a cold job that step would take were
 * it on the job's path. Not thread safe.
 */
final class StartupFigures {
  /** The stock figure startup steps are set beside: its name and value in ms. */
  record Baseline(String name, double ms) {}

  /** Per name prefix: the open waits and the first-connection medians, in ms. */
  private final Map<String, List<double[]>> samples = new TreeMap<>();

  /** Collects every executor's report of {@code sc}, prints it, and keeps its figures under {@code prefix}. */
  void collect(JavaSparkContext sc, String prefix) {
    for (TransportReport r : TransportReports.collect(sc)) {
      System.out.println("  " + r);
      if (r.openNanos() > 0 && r.firstConnections() > 0) {
        samples.computeIfAbsent(prefix, k -> new ArrayList<>())
            .add(new double[] {r.openWaitNanos() / 1e6, r.firstConnectMedianNanos() / 1e6, r.openNanos() / 1e6});
      }
    }
  }

  /**
   * {@code <prefix>.open_wall} (the first task's wait for the open), {@code <prefix>.open} (the
   * open on its own thread) and {@code <prefix>.first_connect}, in ms: medians of what was
   * collected, each beside {@code baseline}'s answer for its prefix (a prefix it has none for is
   * left out).
   */
  List<Measurement> measurements(java.util.function.Function<String, java.util.Optional<Baseline>> baseline) {
    List<Measurement> out = new ArrayList<>();
    samples.forEach((prefix, s) -> baseline.apply(prefix).ifPresent(b -> {
      out.add(new Measurement(prefix + ".open_wall", "ms", median(s, 0), b.name(), b.ms()));
      out.add(new Measurement(prefix + ".open", "ms", median(s, 2), b.name(), b.ms()));
      out.add(new Measurement(prefix + ".first_connect", "ms", median(s, 1), b.name(), b.ms()));
    }));
    return out;
  }

  /**
   * {@code <prefix>.open} and {@code <prefix>.first_connect} beside the same figures of {@code
   * baselinePrefix} (executors started otherwise in the same run), in ms; nothing unless both were
   * collected.
   */
  List<Measurement> beside(String prefix, String baselinePrefix) {
    List<double[]> s = samples.get(prefix);
    List<double[]> b = samples.get(baselinePrefix);
    if (s == null || b == null) {
      return List.of();
    }
    return List.of(
        new Measurement(prefix + ".open", "ms", median(s, 2), baselinePrefix + ".open", median(b, 2)),
        new Measurement(prefix + ".first_connect", "ms", median(s, 1), baselinePrefix + ".first_connect", median(b, 1)));
  }

  private static double median(List<double[]> samples, int column) {
    return Median.of(samples.stream().mapToDouble(x -> x[column]).toArray());
  }
}
