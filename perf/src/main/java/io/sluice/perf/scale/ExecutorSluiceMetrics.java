package io.sluice.perf.scale;

import com.codahale.metrics.Gauge;
import io.sluice.spark.shuffle.TransportReport;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Reads the {@code sluice} metrics source (RdmaShuffleManager's transport counters: connections
 * opened, accepted and closed, handshake failures, registered memory, start-up costs) through
 * Spark's metrics system, on the driver and, with the transport's {@link TransportReport}, on
 * every executor. Executors are read with one job of many small tasks, so each idle executor runs
 * at least one; an executor that ran none is missing from the answer. The gauges are empty where
 * the source is not registered (the sort shuffle, or an executor whose transport never opened).
 * Stateless.
 */
final class ExecutorSluiceMetrics {
  static final String SOURCE = "sluice";

  private ExecutorSluiceMetrics() {}

  /**
   * One executor's counts: its {@code sluice} gauges by name and its transport's report (null
   * where it has none: the sort shuffle, or a transport that never opened).
   */
  record Counts(HashMap<String, Long> gauges, TransportReport report) implements Serializable {
    private static final long serialVersionUID = 1L;
  }

  /** Executor id to that executor's counts, read by one job of 8 tasks per executor (at least 16). */
  static Map<String, Counts> collect(JavaSparkContext sc, int executors) {
    int tasks = Math.max(16, 8 * executors);
    Map<String, Counts> byExecutor = new TreeMap<>();
    for (Tuple2<String, Counts> t : sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks)
        .map(i -> new Tuple2<>(SparkEnv.get().executorId(),
            new Counts(local(), RdmaShuffleManager.localTransportReport().orElse(null))))
        .collect()) {
      byExecutor.put(t._1(), t._2());
    }
    return byExecutor;
  }

  /** This process's {@code sluice} gauges now; empty when the source is not registered. */
  static HashMap<String, Long> local() {
    HashMap<String, Long> values = new HashMap<>();
    List<Source> sources = new ArrayList<>(CollectionConverters.asJava(SparkEnv.get().metricsSystem()
        .getSourcesByName(SOURCE)));
    for (Source s : sources) {
      for (Map.Entry<String, Gauge> g : s.metricRegistry().getGauges().entrySet()) {
        if (g.getValue().getValue() instanceof Number n) {
          values.put(g.getKey(), n.longValue());
        }
      }
    }
    return values;
  }
}
