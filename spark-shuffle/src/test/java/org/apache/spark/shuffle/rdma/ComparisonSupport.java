package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * Runs a list of jobs on local-cluster under Spark's default shuffle, then under
 * RdmaShuffleManager with the same settings, and requires identical results. Subclasses pass a
 * name, their settings and their jobs; each job returns a value with a meaningful equals (lists
 * keep Spark's order where the job defines one).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ComparisonSupport {
  /** A named job. */
  record Job(String name, Function<JavaSparkContext, Object> run) {}

  private final String name;
  private final Map<String, String> settings;
  private final List<Job> jobs;
  private final Map<String, Object> baseline = new LinkedHashMap<>();
  JavaSparkContext sc;
  final ShuffleMetricsListener metrics = new ShuffleMetricsListener();

  /**
   * @param name names the two applications ("-sort", "-rdma")
   * @param settings set on both applications
   * @param jobs run under both shuffle managers, in this order
   */
  ComparisonSupport(String name, Map<String, String> settings, List<Job> jobs) {
    this.name = name;
    this.settings = Map.copyOf(settings);
    this.jobs = List.copyOf(jobs);
  }

  private SparkConf configure(SparkConf conf) {
    settings.forEach(conf::set);
    return conf;
  }

  @BeforeAll
  void runBaselineThenStartRdma() {
    try (JavaSparkContext sort = LocalCluster.start(configure(LocalCluster.conf(name + "-sort", false)))) {
      for (Job j : jobs) {
        baseline.put(j.name(), j.run().apply(sort));
      }
    }
    sc = LocalCluster.start(configure(LocalCluster.conf(name + "-rdma", true)));
    sc.sc().addSparkListener(metrics);
  }

  /**
   * After every job, each executor's only live transport regions are its registered map outputs:
   * every READ destination was released, including on failure paths.
   */
  @AfterAll
  void noLeakedRegionsThenStop() {
    try {
      ExecutorRegions.awaitOnlyMapOutputs(sc);
    } finally {
      sc.stop();
    }
  }

  @TestFactory
  Stream<DynamicTest> sameResultsAsSortShuffle() {
    return jobs.stream().map(j -> DynamicTest.dynamicTest(j.name(), () -> {
      Object got = j.run().apply(sc);
      assertEquals(baseline.get(j.name()), got, j.name() + " under RdmaShuffleManager");
    }));
  }

  /** Every executor's transport registered with the driver, so reads did not fall back. */
  void assertTransportsActive() {
    LocalCluster.awaitRegisteredTransports(LocalCluster.EXECUTORS);
  }

  /** Bytes the executors' reducers READ so far, per data path ("shm", "tcp", "verbs"). */
  Map<String, Long> bytesReadByPath() {
    Map<String, Long> total = new java.util.TreeMap<>();
    for (TransportReport r : TransportReports.collect(sc)) {
      r.bytesReadByPath().forEach((path, n) -> total.merge(path, n, Long::sum));
    }
    return total;
  }

  void assertRemoteBytesMoved() throws java.util.concurrent.TimeoutException {
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    assertTrue(metrics.snapshot().remoteBytes() > 0, "no remote shuffle bytes were read");
    assertTrue(metrics.snapshot().records() > 0, "no shuffle records were counted");
  }
}
