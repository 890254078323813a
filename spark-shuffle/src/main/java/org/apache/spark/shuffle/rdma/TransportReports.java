package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.TransportReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Collects every executor's {@link TransportReport} from the driver, with one job of many small
 * tasks so that each live executor runs at least one. Call it while the executors are idle: an
 * executor that runs none of the tasks is missed. Stateless.
 */
public final class TransportReports {
  private static final int TASKS = 64;

  private TransportReports() {}

  /** One report per executor that runs RdmaShuffleManager with a transport, in executor id order. */
  public static List<TransportReport> collect(JavaSparkContext sc) {
    Map<String, TransportReport> byExecutor = new TreeMap<>();
    for (TransportReport r : sc.parallelize(IntStream.range(0, TASKS).boxed().toList(), TASKS)
        .flatMap(i -> RdmaShuffleManager.localTransportReport().stream().iterator()).collect()) {
      byExecutor.merge(r.executorId(), r, (a, b) -> a.bytesRead() >= b.bytesRead() ? a : b);
    }
    return new ArrayList<>(byExecutor.values());
  }
}
