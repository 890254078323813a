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
 * TransportReport}. Reported as medians over every executor of every round, beside the goals
 * they are judged against (50 ms and 20 ms): Spark's sort shuffle has no such step to measure.
 * Not thread safe.
 */
final class StartupFigures {
  static final double OPEN_GOAL_MS = 50;
  static final double FIRST_CONNECT_GOAL_MS = 20;

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
   * open on its own thread) and {@code <prefix>.first_connect}, in ms: medians of what was collected.
   */
  List<Measurement> measurements() {
    List<Measurement> out = new ArrayList<>();
    samples.forEach((prefix, s) -> {
      out.add(new Measurement(prefix + ".open_wall", "ms", Median.of(s.stream().mapToDouble(x -> x[0]).toArray()),
          "goal.startup.open_wall", OPEN_GOAL_MS));
      out.add(new Measurement(prefix + ".open", "ms", Median.of(s.stream().mapToDouble(x -> x[2]).toArray()),
          "goal.startup.open_wall", OPEN_GOAL_MS));
      out.add(new Measurement(prefix + ".first_connect", "ms",
          Median.of(s.stream().mapToDouble(x -> x[1]).toArray()), "goal.startup.first_connect", FIRST_CONNECT_GOAL_MS));
    });
    return out;
  }
}
