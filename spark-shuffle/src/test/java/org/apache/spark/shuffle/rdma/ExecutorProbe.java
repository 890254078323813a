package org.apache.spark.shuffle.rdma;

import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Looks inside the executors' shuffle transports from a test. Its functions run on executors,
 * so this class refers to nothing but Spark and this module (no test framework). Stateless.
 */
final class ExecutorProbe {
  private ExecutorProbe() {}

  /**
   * Per task of a 16-task job: {registered map outputs, live transport regions that are not idle
   * pooled READ destinations} of its executor.
   */
  static List<long[]> registrations(JavaSparkContext sc) {
    return sc.parallelize(java.util.stream.IntStream.range(0, 16).boxed().toList(), 16).map(i -> {
      ExecutorShuffleTransport t = ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).transport()
          .orElseThrow(() -> new IllegalStateException("no transport on executor " + SparkEnv.get().executorId()));
      return new long[] {t.registry().registeredCount(),
          t.transport().liveRegionCount() - t.destinations().idleCount()};
    }).collect();
  }

  /**
   * Registered regions (data-file windows) of a shuffle's map outputs, per executor that ran a task
   * of a 16-task job.
   */
  static java.util.Map<String, Integer> registeredWindows(JavaSparkContext sc, int shuffleId) {
    return new java.util.TreeMap<>(sc.parallelize(java.util.stream.IntStream.range(0, 16).boxed().toList(), 16)
        .mapToPair(i -> new scala.Tuple2<>(SparkEnv.get().executorId(),
            ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).transport().orElseThrow().registry().registeredCount(shuffleId)))
        .collectAsMap());
  }
}
