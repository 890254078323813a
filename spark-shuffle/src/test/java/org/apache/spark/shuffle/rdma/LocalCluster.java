package org.apache.spark.shuffle.rdma;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Settings for a real multi-process Spark cluster on this machine: master
 * local-cluster[2,1,1024] launches two executor JVMs from the Spark home the build assembled
 * (target/spark-home/jars), with this module's classes and the transport on their class path.
 */
final class LocalCluster {
  static final String RDMA_MANAGER = RdmaShuffleManager.class.getName();
  static final int EXECUTORS = 2;

  private LocalCluster() {}

  /** A conf for local-cluster; {@code rdma} selects RdmaShuffleManager, else Spark's default. */
  static SparkConf conf(String appName, boolean rdma) {
    String home = System.getProperty("sluice.test.sparkHome");
    String classPath = System.getProperty("sluice.test.executorClassPath");
    if (home == null || classPath == null || !Files.isDirectory(Path.of(home, "jars"))) {
      throw new IllegalStateException("run the tests through Maven: the Spark home and executor class path"
          + " come from the build (sluice.test.sparkHome=" + home + ")");
    }
    SparkConf conf = new SparkConf()
        .setMaster("local-cluster[" + EXECUTORS + ",1,1024]")
        .setAppName(appName)
        .set("spark.home", home)
        .set("spark.executor.extraClassPath", classPath)
        .set("spark.executor.memory", "768m")
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.sql.shuffle.partitions", "8")
        .set("spark.default.parallelism", "4")
        .set("spark.task.maxFailures", "8")
        .set("spark.stage.maxConsecutiveAttempts", "8");
    if (rdma) {
      conf.set("spark.shuffle.manager", RDMA_MANAGER);
    }
    return conf;
  }

  /** Starts a context and waits (with a deadline) until every executor JVM has registered. */
  static JavaSparkContext start(SparkConf conf) {
    JavaSparkContext sc = new JavaSparkContext(conf);
    try {
      awaitExecutors(sc, EXECUTORS, 120);
      return sc;
    } catch (RuntimeException | Error e) {
      sc.stop();
      throw e;
    }
  }

  /** Waits until {@code count} executors are registered. */
  static void awaitExecutors(JavaSparkContext sc, int count, int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (sc.sc().getExecutorIds().size() < count) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(count + " executors did not start within " + seconds
            + " s; see " + System.getProperty("sluice.test.sparkHome") + "/work for their logs");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for executors", e);
      }
    }
  }
}
