package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * An executor JVM is killed with SIGKILL while reduce tasks read its map output. The readers'
 * transport errors must become fetch failures, Spark reruns the lost map tasks on the surviving
 * and the relaunched executor, and the job returns the right answer.
 */
class ExecutorKillTest {
  @Test
  void jobSurvivesSigkillOfAnExecutorMidShuffle() throws Exception {
    SparkConf conf = LocalCluster.conf("kill", true);
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      String appId = sc.sc().applicationId();
      AtomicReference<Optional<Long>> killed = new AtomicReference<>(Optional.empty());
      sc.sc().addSparkListener(new SparkListener() {
        @Override
        public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
          // The second stage of the job is the reduce stage: its first attempt starts reading
          // while the executor goes away.
          if (submitted.stageInfo().stageId() == 1 && submitted.stageInfo().attemptNumber() == 0) {
            Thread killer = new Thread(() -> {
              sleep(1500);
              killed.set(ExecutorProcesses.kill(appId, "1"));
            }, "executor-killer");
            killer.setDaemon(true);
            killer.start();
          }
        }
      });
      int n = 200_000;
      Map<Integer, Long> got = new TreeMap<>(sc.parallelize(RddJobs.range(n), 8)
          .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
          .reduceByKey(Long::sum, 8)
          .mapPartitions(it -> {
            // Slow reducers keep the reduce stage running when the executor dies.
            Thread.sleep(1000);
            List<Tuple2<Integer, Long>> out = new ArrayList<>();
            it.forEachRemaining(out::add);
            return out.iterator();
          })
          .mapToPair(t -> t)
          .collectAsMap());
      Map<Integer, Long> expected = new TreeMap<>();
      RddJobs.range(n).forEach(i -> expected.merge(i % 1000, (long) i, Long::sum));
      assertTrue(killed.get().isPresent(), "no executor was killed");
      assertFalse(ProcessHandle.of(killed.get().get()).map(ProcessHandle::isAlive).orElse(false),
          "killed executor still alive");
      assertEquals(expected, got);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

}
