package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import io.sluice.transport.Eventually;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * What RdmaShuffleManager must do on every Spark line, run on local-cluster (two executor JVMs)
 * with the line's own Spark jars: grouping and sorting that spill in the reader, adaptive query
 * execution (coalescing, a skew join, the local shuffle reader), a killed executor whose map stage
 * reruns, and the fallback to Spark's shuffle when the transport cannot start.
 *
 * <p>One application runs the first four with encryption on (spark.network.crypto for the
 * transport, spark.io.encryption for the shuffle files), local reads and shared memory off, so
 * every block crosses the transport's encrypted tcp path. Expected answers are computed here, not
 * taken from another shuffle.
 *
 * <p>The line modules run it under Spark's test mode (spark.testing): executors take this JVM's
 * class path, so no Spark installation is needed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkLineTest {
  private static final int EXECUTORS = 2;
  private static final int EXECUTOR_WAIT_SECONDS = 120;

  private final ReduceSideSpills spills = new ReduceSideSpills();
  private final StageAttempts attempts = new StageAttempts();
  private SparkSession spark;
  private JavaSparkContext sc;

  private static SparkConf localCluster(String name, int executors) {
    return new SparkConf()
        .setMaster("local-cluster[" + executors + ",1,1024]")
        .setAppName(name)
        .set("spark.shuffle.manager", RdmaShuffleManager.class.getName())
        .set("spark.executor.memory", "768m")
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.default.parallelism", "4")
        .set("spark.task.maxFailures", "8")
        .set("spark.stage.maxConsecutiveAttempts", "8");
  }

  @BeforeAll
  void start() {
    SparkConf conf = localCluster("spark-line", EXECUTORS)
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", "sluice-line-test-secret")
        .set("spark.network.crypto.enabled", "true")
        .set("spark.io.encryption.enabled", "true")
        .set(RdmaShuffleOption.LOCAL_READS.key(), "false")
        .set("spark.shuffle.rdma.transport.shm.enabled", "false")
        // The reader's aggregation map and sorter spill after this many records.
        .set("spark.shuffle.spill.numElementsForceSpillThreshold", "2000");
    SharedJobs.adaptive(conf, 20);
    spark = SparkSession.builder().config(conf).getOrCreate();
    sc = new JavaSparkContext(spark.sparkContext());
    sc.sc().addSparkListener(spills);
    sc.sc().addSparkListener(attempts);
    awaitExecutors(sc, EXECUTORS);
  }

  @AfterAll
  void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  @Order(0)
  void executorsReportTheirTransportsBeforeAnyShuffle() {
    // On Spark 3.5 the driver's address book is not set up with the manager (SparkEnv is not set
    // yet then); collecting the reports must set it up rather than leave the executors without it.
    List<TransportReport> reports = TransportReports.collect(sc);
    assertEquals(EXECUTORS, reports.size(), "reports: " + reports);
  }

  @Test
  @Order(1)
  void groupByKeySpillsInTheReader() throws Exception {
    int n = 60_000;
    resetSpills();
    Map<Integer, long[]> got = new TreeMap<>();
    for (Tuple2<Integer, Iterable<Integer>> g : sc.parallelize(SharedJobs.range(n), 6)
        .mapToPair(i -> new Tuple2<>(i % 500, i)).groupByKey(4).collect()) {
      long count = 0;
      long sum = 0;
      for (int v : g._2()) {
        count++;
        sum += v;
      }
      got.put(g._1(), new long[] {count, sum});
    }
    assertEquals(500, got.size());
    for (Map.Entry<Integer, long[]> e : got.entrySet()) {
      int k = e.getKey();
      // The values of key k are k, k + 500, ..., k + 500 * 119.
      assertEquals(120, e.getValue()[0], "values of key " + k);
      assertEquals(120L * k + 500L * (119 * 120 / 2), e.getValue()[1], "sum of key " + k);
    }
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    assertTrue(spills.diskBytes() > 0, "the reduce tasks did not spill");
  }

  @Test
  @Order(2)
  void sortByKeySpillsInTheReader() throws Exception {
    int n = 60_000;
    resetSpills();
    // A permutation of 0..n-1 (n and the multiplier are coprime), in 6 unsorted partitions.
    JavaPairRDD<Integer, Integer> pairs = sc.parallelize(SharedJobs.range(n), 6)
        .mapToPair(i -> new Tuple2<>((int) ((i * 7919L) % n), i));
    List<Tuple2<Integer, Integer>> sorted = pairs.sortByKey(true, 4).collect();
    assertEquals(n, sorted.size());
    for (int i = 0; i < n; i++) {
      assertEquals(i, sorted.get(i)._1(), "key at position " + i);
      assertEquals(i, (int) ((sorted.get(i)._2() * 7919L) % n), "value of key " + i);
    }
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    assertTrue(spills.diskBytes() > 0, "the reduce tasks did not spill");
  }

  @Test
  @Order(3)
  void adaptiveCoalescing() {
    Dataset<Row> df = spark.range(0, 50_000, 1, 4).selectExpr("id % 13 AS k", "id AS v").groupBy("k").sum("v");
    Map<Long, Long> got = new TreeMap<>();
    for (Row r : df.collectAsList()) {
      got.put(r.getLong(0), r.getLong(1));
    }
    Map<Long, Long> expected = new TreeMap<>();
    for (long id = 0; id < 50_000; id++) {
      expected.merge(id % 13, id, Long::sum);
    }
    assertEquals(expected, got);
    assertPlanShows(df, "coalesced");
  }

  @Test
  @Order(4)
  void adaptiveSkewJoin() {
    // Key 0 holds 80% of the left side, so AQE splits its partition by map ranges.
    Dataset<Row> left = spark.range(0, 60_000, 1, 4)
        .selectExpr("CASE WHEN id % 10 < 8 THEN 0 ELSE id % 200 END AS k", "id AS a");
    Dataset<Row> right = spark.range(0, 400, 1, 2).selectExpr("id % 200 AS k", "id AS b");
    Dataset<Row> df = left.join(right, "k").selectExpr("count(*) AS n", "sum(a) AS sa", "sum(b) AS sb");
    Row r = df.collectAsList().get(0);
    // Each left row meets the two right rows k and k + 200.
    long n = 0;
    long sa = 0;
    long sb = 0;
    for (long id = 0; id < 60_000; id++) {
      long k = id % 10 < 8 ? 0 : id % 200;
      n += 2;
      sa += 2 * id;
      sb += 2 * k + 200;
    }
    assertEquals(List.of(n, sa, sb), List.of(r.getLong(0), r.getLong(1), r.getLong(2)));
    assertPlanShows(df, "skew=true");
  }

  @Test
  @Order(5)
  void adaptiveLocalShuffleReader() {
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "1m");
    try {
      // Statically both sides look large; at run time the filtered side is small, so AQE turns the
      // join into a broadcast join and reads the other side with the local shuffle reader.
      Dataset<Row> big = spark.range(0, 200_000, 1, 4).selectExpr("id % 5000 AS k", "id AS a");
      Dataset<Row> small = spark.range(0, 200_000, 1, 4).where("id % 97 = 3").selectExpr("id % 5000 AS k", "id AS b");
      Dataset<Row> df = big.join(small, "k").selectExpr("count(*) AS n", "sum(a) AS sa", "sum(b) AS sb");
      Row r = df.collectAsList().get(0);
      // Every k in 0..4999 has the 40 big rows k + 5000 j, j = 0..39.
      long n = 0;
      long sa = 0;
      long sb = 0;
      for (long id = 3; id < 200_000; id += 97) {
        long k = id % 5000;
        n += 40;
        sa += 40 * k + 5000L * (39 * 40 / 2);
        sb += 40 * id;
      }
      assertEquals(List.of(n, sa, sb), List.of(r.getLong(0), r.getLong(1), r.getLong(2)));
      assertPlanShows(df, "local");
    } finally {
      spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    }
  }

  @Test
  @Order(6)
  void readsCrossedTheEncryptedTransport() {
    awaitRegisteredTransports(EXECUTORS);
    Map<String, Long> byPath = new TreeMap<>();
    for (TransportReport r : TransportReports.collect(sc)) {
      r.bytesReadByPath().forEach((path, bytes) -> byPath.merge(path, bytes, Long::sum));
    }
    assertTrue(byPath.getOrDefault("tcp", 0L) > 0 && !byPath.containsKey("shm"), "bytes READ by path: " + byPath);
  }

  @Test
  @Order(7)
  void killedExecutorsMapStageReruns(@TempDir Path signals) throws Exception {
    // Events of the earlier tests' jobs still on the bus would reach the listener below first.
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    AtomicReference<Integer> mapStage = new AtomicReference<>();
    SparkListener firstStage = new SparkListener() {
      @Override
      public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
        // The job's first stage writes the map output.
        mapStage.compareAndSet(null, submitted.stageInfo().stageId());
      }
    };
    sc.sc().addSparkListener(firstStage);
    try {
      int n = 100_000;
      SharedJobs.KilledMidShuffle run = SharedJobs.sumsWithAnExecutorKilled(sc, n, "1", signals);
      assertEquals(SharedJobs.expectedSums(n), run.sums());
      assertTrue(run.killedPid().isPresent(), "executor 1 was not found to kill");
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertTrue(attempts.maxAttempt(mapStage.get()) >= 1, "the map stage was not run again");
    } finally {
      sc.sc().removeSparkListener(firstStage);
    }
  }

  @Test
  @Order(8)
  void fallsBackToSparkShuffleWhenTheTransportCannotStart() {
    // One application at a time per JVM: this one replaces the encrypted one.
    spark.stop();
    spark = null;
    // A provider this machine lacks (no RDMA device): the executor's transport cannot start.
    SparkConf conf = localCluster("spark-line-fallback", 1).set("spark.shuffle.rdma.transport.provider", "verbs");
    try (JavaSparkContext fallback = new JavaSparkContext(conf)) {
      awaitExecutors(fallback, 1);
      Map<Integer, Long> got = new TreeMap<>(fallback.parallelize(SharedJobs.range(20_000), 4)
          .mapToPair(i -> new Tuple2<>(i % 97, (long) i)).reduceByKey(Long::sum, 5).collectAsMap());
      Map<Integer, Long> expected = new TreeMap<>();
      for (int i = 0; i < 20_000; i++) {
        expected.merge(i % 97, (long) i, Long::sum);
      }
      assertEquals(expected, got);
      RdmaShuffleManager manager = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
      assertEquals(List.of(), manager.registeredTransports(), "no executor should have a transport");
      assertEquals(List.of(), TransportReports.collect(fallback), "no executor should report a transport");
    }
  }

  private static void assertPlanShows(Dataset<Row> df, String marker) {
    String plan = df.queryExecution().executedPlan().toString();
    assertTrue(plan.contains(marker), "final plan lacks '" + marker + "':\n" + plan);
  }

  private static void awaitExecutors(JavaSparkContext sc, int count) {
    Eventually.matches(count + " executors registered", Duration.ofSeconds(EXECUTOR_WAIT_SECONDS),
        () -> sc.sc().getExecutorIds().size(), n -> n >= count);
  }

  /** Waits until the driver's address book lists {@code count} transports: executors register without waiting. */
  private static void awaitRegisteredTransports(int count) {
    RdmaShuffleManager manager = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
    Eventually.matches(count + " executors' transports registered with the driver", Eventually.DEADLINE,
        manager::registeredTransports, t -> t.size() == count);
  }

  /** Starts counting spills afresh, once the earlier jobs' task ends have reached the listener. */
  private void resetSpills() throws java.util.concurrent.TimeoutException {
    sc.sc().listenerBus().waitUntilEmpty(10_000);
    spills.reset();
  }

  /** Bytes the result (reduce) tasks spilled to disk since the last reset. Thread safe. */
  private static final class ReduceSideSpills extends SparkListener {
    private final AtomicLong disk = new AtomicLong();

    void reset() {
      disk.set(0);
    }

    long diskBytes() {
      return disk.get();
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.taskMetrics() != null && end.taskType().equals("ResultTask")) {
        disk.addAndGet(end.taskMetrics().diskBytesSpilled());
      }
    }
  }

  /** The highest attempt number submitted, per stage. Thread safe. */
  private static final class StageAttempts extends SparkListener {
    private final Map<Integer, Integer> maxAttempt = new ConcurrentHashMap<>();

    int maxAttempt(int stageId) {
      return maxAttempt.getOrDefault(stageId, -1);
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      maxAttempt.merge(submitted.stageInfo().stageId(), submitted.stageInfo().attemptNumber(), Math::max);
    }
  }
}
