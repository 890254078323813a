package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** RDD shuffles with Spark's Java serializer and compression on (the defaults). */
class RddShuffleTest extends ComparisonSupport {
  RddShuffleTest() {
    super("rdd-java", Map.of("spark.shuffle.compress", "true"), jobs());
  }

  private static List<Job> jobs() {
    List<Job> jobs = new ArrayList<>(RddJobs.keyedShuffles());
    jobs.add(new Job("repartition of 0 rows", sc -> sc.parallelize(List.<Integer>of(), 3).repartition(5).collect()));
    jobs.add(RddJobs.repartitionOfOneRow());
    jobs.add(new Job("records over 16 MiB", RddJobs::bigRecords));
    jobs.add(new Job("2100 partitions", RddJobs::manyPartitions));
    return jobs;
  }

  @Test
  void readsWentThroughTheTransport() throws Exception {
    RddJobs.reduceByKey(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
    // Both executors run on this host: with the default provider they map each other's shuffle
    // files below the roots they take from their own block-manager folders, so no READ goes
    // over tcp. The report counts each READ by the path that carried it.
    Map<String, Long> paths = bytesReadByPath();
    assertTrue(paths.getOrDefault("shm", 0L) > 0, "data paths: " + paths);
    assertEquals(0L, paths.getOrDefault("tcp", 0L), "bytes READ over tcp loopback: " + paths);
  }

  @Test
  void unregisteringShufflesReleasesEveryRegistration() throws Exception {
    RddJobs.reduceByKey(sc);
    assertTrue(ExecutorProbe.registrations(sc).stream().anyMatch(r -> r[0] > 0), "no map output was registered");
    awaitNoRunningTasks();
    awaitBlockManagersRegistered();
    int lastShuffle = sc.sc().newShuffleId();
    for (int id = 0; id <= lastShuffle; id++) {
      sc.sc().cleaner().get().doCleanupShuffle(id, true);
      // The executors' side of that cleanup, also for shuffles the cleaner already dropped on the
      // driver while an executor's block manager was unknown (after the fetch failure above).
      sc.sc().env().blockManager().master().removeShuffle(id, true);
    }
    ExecutorRegions.awaitNone(sc);
  }

  /**
   * Map tasks of a stage attempt that Spark abandoned after a fetch failure (an earlier test in
   * this context) keep running and register their output when they end; a cleanup before that
   * would miss it. Waits, with a deadline, until no executor runs a task.
   */
  private void awaitNoRunningTasks() {
    // The status tracker counts running tasks from listener events: read it with the bus drained.
    Eventually.holds("no executor runs a task", Duration.ofSeconds(60), () -> {
      try {
        sc.sc().listenerBus().waitUntilEmpty(10_000);
      } catch (java.util.concurrent.TimeoutException e) {
        return false;
      }
      return Arrays.stream(sc.sc().statusTracker().getExecutorInfos()).allMatch(e -> e.numRunningTasks() == 0);
    });
  }

  /**
   * A fetch failure makes the driver forget the failing executor's block manager until that
   * executor's next heartbeat re-registers it, and a shuffle cleanup in between is not sent to it
   * (Spark's own files would stay behind too). The earlier fetch-failure test causes exactly that;
   * waits, with a deadline, until every executor's block manager is known again, so the removal
   * below reaches every executor.
   */
  private void awaitBlockManagersRegistered() {
    // The driver's own block manager is listed too.
    Eventually.reaches("every executor's block manager registered with the driver", Duration.ofSeconds(60),
        LocalCluster.EXECUTORS + 1, () -> sc.sc().env().blockManager().master().getMemoryStatus().size());
  }

  @Test
  void lostMapOutputBecomesFetchFailureAndIsRecomputed() throws Exception {
    JavaPairRDD<Integer, Long> sums = sc.parallelize(SharedJobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 97, (long) i)).reduceByKey(Long::sum, 5);
    List<Tuple2<Integer, Long>> first = new ArrayList<>(sums.collect());
    int shuffleId = ((org.apache.spark.ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head()).shuffleId();
    // Every executor forgets the output (registrations revoked, files deleted) while the driver
    // still lists it: the next read must fail over the transport and Spark must recompute it.
    sc.parallelize(SharedJobs.range(16), 16).foreach(i -> SparkEnv.get().shuffleManager().unregisterShuffle(shuffleId));
    // Fetch failures of earlier tests may still be on their way to the listener.
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    long failuresBefore = metrics.fetchFailures.get();
    List<Tuple2<Integer, Long>> second = new ArrayList<>(sums.collect());
    first.sort((a, b) -> a._1().compareTo(b._1()));
    second.sort((a, b) -> a._1().compareTo(b._1()));
    assertEquals(first, second);
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    assertTrue(metrics.fetchFailures.get() > failuresBefore, "no fetch failure was reported");
  }
}
