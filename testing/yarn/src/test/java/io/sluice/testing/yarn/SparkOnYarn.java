package io.sluice.testing.yarn;

import io.sluice.transport.Eventually;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaFutureAction;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.RdmaShuffleOption;

/**
 * A Spark application on a {@link YarnMiniCluster} in client mode (the driver is this JVM; the AM
 * and the executors are containers), with RdmaShuffleManager, the NodeManager's shuffle service
 * and dynamic allocation between 0 and 2 executors of one core; and the waits and metrics reads
 * the tests need, each with a deadline. Stateless.
 */
final class SparkOnYarn {
  /** The most executors an application gets, and how many it asks for first. */
  static final int EXECUTORS = 2;
  private static final long WAIT_SECONDS = 120;
  private static final long JOB_SECONDS = 150;

  private SparkOnYarn() {}

  /**
   * The application's settings. The shuffle manager's jar from this build reaches the executors
   * as a user's does, through {@code spark.jars} ({@code --jars}), which YARN localizes into each
   * container; the AM and the executors otherwise run from this JVM's class path without the
   * project's jars (the test classes, Spark, Hadoop). {@code spark.yarn.jars} names one empty local
   * jar so that the YARN client uploads no Spark distribution.
   */
  static SparkConf conf(YarnMiniCluster cluster, String appName) throws IOException {
    Path target = Files.createDirectories(Path.of("target")).toAbsolutePath();
    Path noSparkJars = Files.createTempFile(target, "no-spark-jars", ".jar");
    List<String> testClassPath = List.of(System.getProperty("surefire.test.class.path",
        System.getProperty("java.class.path")).split(File.pathSeparator));
    List<String> shuffleJars = testClassPath.stream()
        .filter(e -> Path.of(e).getFileName().toString().matches("sluice-spark-shuffle-.*\\.jar")).toList();
    if (shuffleJars.size() != 1) {
      throw new IllegalStateException("the test class path should hold one sluice-spark-shuffle jar (run mvn with"
          + " package or verify, so the reactor hands over the jar, not its classes), holds " + shuffleJars);
    }
    String containerClassPath = testClassPath.stream()
        .filter(e -> !Path.of(e).getFileName().toString().matches("(sluice-.*|disni-.*)\\.jar"))
        .collect(Collectors.joining(File.pathSeparator));
    SparkConf conf = new SparkConf().setMaster("yarn").setAppName(appName)
        .set("spark.submit.deployMode", "client")
        .set("spark.yarn.jars", "local:" + noSparkJars)
        .set("spark.jars", shuffleJars.get(0))
        // The YARN client copies spark.jars here for the containers (not to ~/.sparkStaging).
        .set("spark.yarn.stagingDir", target.resolve("spark-staging").toUri().toString())
        // In client mode the driver's class path is the AM's.
        .set("spark.driver.extraClassPath", containerClassPath)
        .set("spark.executor.extraClassPath", containerClassPath)
        .set("spark.executor.memory", "512m")
        .set("spark.executor.cores", "1")
        .set("spark.yarn.am.memory", "512m")
        .set("spark.ui.enabled", "false")
        .set("spark.shuffle.manager", RdmaShuffleManager.class.getName())
        .set("spark.shuffle.service.enabled", "true")
        .set("spark.shuffle.service.port", Integer.toString(cluster.shuffleServicePort()))
        .set("spark.dynamicAllocation.enabled", "true")
        .set("spark.dynamicAllocation.minExecutors", "0")
        .set("spark.dynamicAllocation.initialExecutors", Integer.toString(EXECUTORS))
        .set("spark.dynamicAllocation.maxExecutors", Integer.toString(EXECUTORS))
        .set("spark.dynamicAllocation.executorIdleTimeout", "3s")
        // Every container is on this one host: without this, Spark's reader would read "host-local"
        // blocks straight from disk and never fetch from the shuffle service, as it does across hosts.
        .set("spark.shuffle.readHostLocalDisk", "false")
        // Executors report their Sluice metrics to the driver every 200 ms, not every 10 s.
        .set(RdmaShuffleOption.METRICS_REPORT_INTERVAL.key(), "200ms");
    cluster.config().forEach(e -> conf.set("spark.hadoop." + e.getKey(), e.getValue()));
    return conf;
  }

  /**
   * Runs small jobs until one of them ran tasks on {@link #EXECUTORS} executors, so that the
   * application has them all, each has just finished a task, and a job started now finds them all
   * (an executor idle for {@code executorIdleTimeout} before the other registered would be
   * released: waiting for registrations alone races with dynamic allocation). Returns once every
   * event of those jobs has reached the listeners, so a listener added next sees none of them.
   */
  static void awaitBusyExecutors(JavaSparkContext sc) throws TimeoutException {
    List<Integer> tasks = IntStream.range(0, 2 * EXECUTORS).boxed().toList();
    Eventually.matches(EXECUTORS + " executors running tasks of one job (the executors each job ran on)",
        Duration.ofSeconds(WAIT_SECONDS), () -> {
          try {
            return new TreeSet<>(await(sc.parallelize(tasks, tasks.size()).map(i -> {
              // Long enough that the job cannot finish on the first executor alone before the other takes a task.
              Thread.sleep(300);
              return SparkEnv.get().executorId();
            }).collectAsync()));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for executors", e);
          } catch (TimeoutException e) {
            throw new IllegalStateException(e.getMessage(), e);
          }
        }, ran -> ran.size() >= EXECUTORS);
    sc.sc().listenerBus().waitUntilEmpty(TimeUnit.SECONDS.toMillis(30));
  }

  /** A job's result, waited for at most {@value #JOB_SECONDS} s; the job is cancelled if it takes longer. */
  static <T> T await(JavaFutureAction<T> job) throws InterruptedException, TimeoutException {
    try {
      return job.get(JOB_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      job.cancel(true);
      throw new TimeoutException("a job did not finish within " + JOB_SECONDS + " s; cancelled it");
    } catch (ExecutionException e) {
      throw new IllegalStateException("a job failed", e.getCause());
    }
  }

  /** The records of a pair RDD as a sorted map, waited for as {@link #await} does. */
  static <K, V> Map<K, V> collectSorted(JavaPairRDD<K, V> rdd) throws InterruptedException, TimeoutException {
    Map<K, V> map = new TreeMap<>();
    for (scala.Tuple2<K, V> t : await(rdd.collectAsync())) {
      map.put(t._1(), t._2());
    }
    return map;
  }

  /** Waits until dynamic allocation has released every executor. */
  static void awaitNoExecutors(JavaSparkContext sc) {
    Eventually.matches("idle executors released", Duration.ofSeconds(WAIT_SECONDS),
        () -> sc.sc().getExecutorIds(), scala.collection.Seq::isEmpty);
  }

  /** The YARN container an executor runs in, as Spark on YARN records among the executor's attributes. */
  static Optional<String> containerOf(JavaSparkContext sc, String executorId) {
    scala.Option<String> id = sc.sc().statusStore().executorSummary(executorId).attributes().get("CONTAINER_ID");
    return id.isDefined() ? Optional.of(id.get()) : Optional.empty();
  }

  /**
   * The driver's Sluice metrics (the {@code sluice} source: the sum of every executor's last
   * report, kept after the executor is gone) once {@code done} holds: executors report every
   * 200 ms, each at its own moment. Fails naming {@code what} with the last values if it does not
   * hold within {@link Eventually#DEADLINE}.
   */
  static Map<String, Long> awaitSluiceMetrics(String what, Predicate<Map<String, Long>> done) {
    return Eventually.matches(what, Eventually.DEADLINE, SparkOnYarn::sluiceMetrics, done);
  }

  /** The gauges of the driver's {@code sluice} metrics source now, as every Spark metrics sink reads them. */
  static Map<String, Long> sluiceMetrics() {
    scala.collection.immutable.Seq<Source> sources = SparkEnv.get().metricsSystem().getSourcesByName("sluice");
    if (sources.size() != 1) {
      throw new IllegalStateException("the driver has " + sources.size() + " metrics sources named sluice");
    }
    Map<String, Long> values = new TreeMap<>();
    sources.head().metricRegistry().getGauges().forEach((name, gauge) -> values.put(name, (Long) gauge.getValue()));
    return values;
  }

  /** The bytes reduce tasks READ through the transport, over every data path. */
  static long transportBytesRead(Map<String, Long> metrics) {
    return metrics.get("reads.tcp.bytes") + metrics.get("reads.shm.bytes") + metrics.get("reads.verbs.bytes");
  }
}
