package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * Settings and jobs that the default line's tests and every other line's tests share. Stateless.
 */
final class SharedJobs {
  /** How long a reduce task waits for the kill, and the killer for a reduce task to ask for it. */
  private static final int KILL_WAIT_SECONDS = 120;

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

  /** What {@link #sumsWithAnExecutorKilled} returns: the job's answer and the pid it killed, if it found the process. */
  record KilledMidShuffle(Map<Integer, Long> sums, Optional<Long> killedPid) {}

  /**
   * Sums of {@code 0..n-1} by {@code i % 1000} through a reduceByKey on 8 partitions, with executor
   * {@code executorId} killed by SIGKILL while the reduce stage runs. Each reduce task, once it has
   * read its input, asks for the kill (a file in {@code signals}, a folder on this host) and waits
   * until it was done; a thread of this JVM kills the executor when first asked. The first reduce
   * tasks hold every executor's slot until then, so the kill always comes before the other reduce
   * tasks read, whatever the machine's load: they find the killed executor's map output gone.
   */
  static KilledMidShuffle sumsWithAnExecutorKilled(JavaSparkContext sc, int n, String executorId, Path signals)
      throws InterruptedException {
    String appId = sc.sc().applicationId();
    AtomicReference<Optional<Long>> killed = new AtomicReference<>(Optional.empty());
    Thread killer = new Thread(() -> {
      try {
        FileSignals.await(signals, "kill-request", 1, KILL_WAIT_SECONDS);
        killed.set(ExecutorProcesses.kill(appId, executorId));
      } catch (IOException | RuntimeException e) {
        System.err.println("executor-killer: " + e);
      } finally {
        try {
          FileSignals.signal(signals, "killed", killed.get().map(String::valueOf).orElse("none"));
        } catch (IOException e) {
          System.err.println("executor-killer: " + e);
        }
      }
    }, "executor-killer");
    killer.setDaemon(true);
    killer.start();
    String dir = signals.toString();
    Map<Integer, Long> sums = new TreeMap<>(sc.parallelize(range(n), 8)
        .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
        .reduceByKey(Long::sum, 8)
        .mapPartitions(it -> {
          // The reduce side's aggregation has read every block by the time this runs.
          List<Tuple2<Integer, Long>> out = new ArrayList<>();
          it.forEachRemaining(out::add);
          FileSignals.signal(Path.of(dir), "kill-request", SparkEnv.get().executorId());
          FileSignals.await(Path.of(dir), "killed", 1, KILL_WAIT_SECONDS);
          return out.iterator();
        })
        .mapToPair(t -> t)
        .collectAsMap());
    killer.join(TimeUnit.SECONDS.toMillis(KILL_WAIT_SECONDS));
    return new KilledMidShuffle(sums, killed.get());
  }

  /** What {@link #sumsWithAnExecutorKilled} must return, computed without Spark. */
  static Map<Integer, Long> expectedSums(int n) {
    Map<Integer, Long> expected = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      expected.merge(i % 1000, (long) i, Long::sum);
    }
    return expected;
  }
}
