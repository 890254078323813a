package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.junit.jupiter.api.Test;

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
            SharedJobs.killLater(appId, "1", 1500, killed);
          }
        }
      });
      int n = 200_000;
      Map<Integer, Long> got = SharedJobs.slowReducerSums(sc, n);
      Map<Integer, Long> expected = SharedJobs.expectedSums(n);
      assertTrue(killed.get().isPresent(), "no executor was killed");
      assertFalse(ProcessHandle.of(killed.get().get()).map(ProcessHandle::isAlive).orElse(false),
          "killed executor still alive");
      assertEquals(expected, got);
    }
  }
}
