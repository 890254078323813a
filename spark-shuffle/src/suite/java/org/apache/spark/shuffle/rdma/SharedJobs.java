package org.apache.spark.shuffle.rdma;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * Settings and jobs that the default line's tests and every other line's tests share. Stateless.
 */
final class SharedJobs {
  private SharedJobs() {}

  /** Adaptive query execution with partition coalescing, skew joins and the local shuffle reader, on small inputs. */
  static SparkConf adaptive(SparkConf conf, int shufflePartitions) {
    return conf.set("spark.sql.adaptive.enabled", "true")
        .set("spark.sql.shuffle.partitions", Integer.toString(shufflePartitions))
        .set("spark.sql.adaptive.coalescePartitions.enabled", "true")
        .set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "16k")
        .set("spark.sql.adaptive.skewJoin.enabled", "true")
        .set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2")
        .set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "8k")
        .set("spark.sql.adaptive.localShuffleReader.enabled", "true")
        .set("spark.sql.autoBroadcastJoinThreshold", "-1");
  }

  /** 0 to n - 1. */
  static List<Integer> range(int n) {
    List<Integer> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  /**
   * Sums of {@code 0..n-1} by {@code i % 1000} through a reduceByKey on 8 partitions, whose reduce
   * tasks wait a second before reading, so that the reduce stage is still running when a test
   * kills an executor.
   */
  static Map<Integer, Long> slowReducerSums(JavaSparkContext sc, int n) {
    return new TreeMap<>(sc.parallelize(range(n), 8)
        .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
        .reduceByKey(Long::sum, 8)
        .mapPartitions(it -> {
          Thread.sleep(1000);
          List<Tuple2<Integer, Long>> out = new ArrayList<>();
          it.forEachRemaining(out::add);
          return out.iterator();
        })
        .mapToPair(t -> t)
        .collectAsMap());
  }

  /** What {@link #slowReducerSums} must return, computed without Spark. */
  static Map<Integer, Long> expectedSums(int n) {
    Map<Integer, Long> expected = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      expected.merge(i % 1000, (long) i, Long::sum);
    }
    return expected;
  }

  /**
   * Kills executor {@code executorId} of {@code appId} after {@code delayMs}, on a daemon thread
   * of its own, and sets {@code killed} to its pid (empty if no such process was found).
   */
  static void killLater(String appId, String executorId, long delayMs, AtomicReference<Optional<Long>> killed) {
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      killed.set(ExecutorProcesses.kill(appId, executorId));
    }, "executor-killer");
    t.setDaemon(true);
    t.start();
  }
}
