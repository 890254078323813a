package io.sluice.examples.pipeline;

import io.sluice.spark.shuffle.TransportReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;

/**
 * Where a job's shuffle bytes went: Spark's read metrics (remote and local bytes, fetch wait) and,
 * under RdmaShuffleManager, the bytes each executor READ per data path. Stock Spark moves remote
 * blocks over its netty block transfer service, reported as path "netty". Immutable.
 */
public record ShuffleReport(ShuffleReadTotals.Totals totals, Map<String, Long> bytesByPath) {

  /** Asks every executor (through many small tasks) for its transport's report. */
  public static ShuffleReport collect(JavaSparkContext sc, ShuffleReadTotals listener)
      throws java.util.concurrent.TimeoutException {
    sc.sc().listenerBus().waitUntilEmpty(30_000);
    ShuffleReadTotals.Totals totals = listener.snapshot();
    List<Integer> slots = new ArrayList<>();
    for (int i = 0; i < 32; i++) {
      slots.add(i);
    }
    Map<String, TransportReport> byExecutor = new TreeMap<>();
    for (TransportReport r : sc.parallelize(slots, slots.size())
        .flatMap(i -> RdmaShuffleManager.localTransportReport().stream().iterator()).collect()) {
      byExecutor.merge(r.executorId(), r, (a, b) -> a.bytesRead() >= b.bytesRead() ? a : b);
    }
    Map<String, Long> paths = new TreeMap<>();
    byExecutor.values().forEach(r -> r.bytesReadByPath().forEach((p, n) -> paths.merge(p, n, Long::sum)));
    long read = paths.values().stream().mapToLong(Long::longValue).sum();
    if (totals.remoteBytes() > read) {
      paths.merge("netty", totals.remoteBytes() - read, Long::sum);
    }
    return new ShuffleReport(totals, paths);
  }
}
