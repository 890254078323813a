package org.apache.spark.shuffle.rdma;

import io.sluice.transport.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
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
    return conf(appName, rdma, EXECUTORS);
  }

  /** A conf for local-cluster with {@code executors} executor JVMs of one core each. */
  static SparkConf conf(String appName, boolean rdma, int executors) {
    String home = System.getProperty("sluice.test.sparkHome");
    String classPath = System.getProperty("sluice.test.executorClassPath");
    if (home == null || classPath == null || !Files.isDirectory(Path.of(home, "jars"))) {
      throw new IllegalStateException("run the tests through Maven: the Spark home and executor class path"
          + " come from the build (sluice.test.sparkHome=" + home + ")");
    }
    SparkConf conf = new SparkConf()
        .setMaster("local-cluster[" + executors + ",1,1024]")
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
    return start(conf, EXECUTORS);
  }

  /** Starts a context and waits (with a deadline) until {@code executors} executor JVMs have registered. */
  static JavaSparkContext start(SparkConf conf, int executors) {
    JavaSparkContext sc = new JavaSparkContext(conf);
    try {
      awaitExecutors(sc, executors, 120);
      return sc;
    } catch (RuntimeException | Error e) {
      sc.stop();
      throw e;
    }
  }

  /** Waits until {@code count} executors are registered, for at most {@code seconds}. */
  static void awaitExecutors(JavaSparkContext sc, int count, int seconds) {
    Eventually.matches(count + " executors registered (logs of those that did not start: "
        + System.getProperty("sluice.test.sparkHome") + "/work)", Duration.ofSeconds(seconds),
        () -> sc.sc().getExecutorIds().size(), n -> n >= count);
  }

  /**
   * Waits until the driver's address book lists {@code count} executors' transports, and returns
   * them: an executor sends its registration without waiting for the answer, and only its map
   * tasks wait for it, so an executor that ran none may still be on its way into the book.
   */
  static List<String> awaitRegisteredTransports(int count) {
    RdmaShuffleManager manager = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
    return Eventually.matches(count + " executors' transports registered with the driver", Eventually.DEADLINE,
        manager::registeredTransports, t -> t.size() == count);
  }
}
