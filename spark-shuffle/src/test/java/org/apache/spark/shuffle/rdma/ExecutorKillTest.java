package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An executor JVM is killed with SIGKILL while the reduce stage runs, before the stage's later
 * reduce tasks read its map output. Their reads must become fetch failures, Spark reruns the lost
 * map tasks on the surviving and the relaunched executor, and the job returns the right answer.
 */
class ExecutorKillTest {
  @Test
  void jobSurvivesSigkillOfAnExecutorMidShuffle(@TempDir Path signals) throws Exception {
    SparkConf conf = LocalCluster.conf("kill", true);
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      int n = 200_000;
      SharedJobs.KilledMidShuffle run = SharedJobs.sumsWithAnExecutorKilled(sc, n, "1", signals);
      assertTrue(run.killedPid().isPresent(), "no executor was killed");
      assertFalse(ProcessHandle.of(run.killedPid().get()).map(ProcessHandle::isAlive).orElse(false),
          "killed executor still alive");
      assertEquals(SharedJobs.expectedSums(n), run.sums());
    }
  }
}
