package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import io.sluice.transport.Eventually;
import io.sluice.transport.ProductThreads;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Tuple2;

/**
 * Opening the executors' transports on real executor JVMs (local-cluster): what it cost reaches
 * the reports and the metrics, the registration sent without waiting is in the driver's book
 * before any reducer looks, and an open that fails part way leaves nothing behind.
 */
class TransportStartupTest {
  /** The open's steps, in the order the first task waits for them. */
  private static final List<String> STEPS = List.of("metrics", "driver", "config", "transport", "register");
  private static final List<String> AFTER_REHEARSAL =
      List.of("metrics", "driver", "config", "transport", "register", "rehearsal");

  private static Map<Integer, Long> reduceByKey(JavaSparkContext sc) {
    return new TreeMap<>(sc.parallelize(SharedJobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 97, (long) i)).reduceByKey(Long::sum, 5).collectAsMap());
  }

  /**
   * Per executor that ran a task of a 16-task job: whether it has a transport, and the names of the
   * product's threads it runs, less the metrics reporter, which a failed open keeps to report the
   * fallback. (The executors have the transport's test jar, with {@link ProductThreads}, on their
   * class path.)
   */
  private static Map<String, List<String>> leftOnExecutors(JavaSparkContext sc) {
    Map<String, List<String>> left = new TreeMap<>();
    for (Tuple2<String, List<String>> e : sc.parallelize(SharedJobs.range(16), 16).map(i -> {
      boolean hasTransport = ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).transport().isPresent();
      List<String> threads = ProductThreads.named(n -> n.startsWith(ProductThreads.PREFIX)
          && !n.startsWith("sluice-metrics-report")).stream().map(Thread::getName).sorted().toList();
      return new Tuple2<>(SparkEnv.get().executorId(),
          Stream.concat(hasTransport ? Stream.of("a transport") : Stream.<String>empty(), threads.stream()).toList());
    }).collect()) {
      left.put(e._1(), e._2());
    }
    return left;
  }

  private static Map<Integer, Long> expected() {
    Map<Integer, Long> expected = new TreeMap<>();
    SharedJobs.range(20_000).forEach(i -> expected.merge(i % 97, (long) i, Long::sum));
    return expected;
  }

  @Test
  void theOpenAndTheFirstConnectionsAreReportedAndEveryReducerFindsItsPeers() throws Exception {
    SparkConf conf = PrometheusScrape.enable(LocalCluster.conf("startup", true));
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      assertEquals(expected(), reduceByKey(sc));
      List<TransportReport> reports = TransportReports.collect(sc);
      assertEquals(LocalCluster.EXECUTORS, reports.size(), reports.toString());
      for (TransportReport r : reports) {
        assertTrue(r.openNanos() > 0, r.toString());
        // The first map task waits for the open only once it is done computing, if at all.
        assertTrue(r.openWaitNanos() <= r.openNanos(), r.toString());
        // The JVM's connection rehearsal runs after the open, off the tasks' path: its step may
        // still be to come.
        List<String> steps = List.copyOf(r.openStepNanos().keySet());
        assertTrue(steps.equals(STEPS) || steps.equals(AFTER_REHEARSAL), r.toString());
        assertTrue(r.firstConnectMedianNanos() <= r.firstConnectMaxNanos(), r.toString());
        // Every reduce task connects ahead to the peers it knows, yet each peer gets one connection.
        assertTrue(r.firstConnections() <= LocalCluster.EXECUTORS - 1, r.toString());
      }
      assertTrue(reports.stream().anyMatch(r -> r.firstConnections() >= 1 && r.bytesRead() > 0), reports.toString());
      // Registrations were sent without waiting, but each map task waited for its executor's before
      // publishing its output: no reducer found a holder without a transport.
      LocalCluster.awaitRegisteredTransports(LocalCluster.EXECUTORS);
      Map<String, Long> scraped = PrometheusScrape.scrapeUntil(sc, "every executor's report, one with a first connection",
          v -> v.getOrDefault("executors_reporting", 0L) >= LocalCluster.EXECUTORS
              && v.getOrDefault("startup_firstConnections", 0L) >= 1);
      assertEquals(0, scraped.get("fallback_reduceTask_peerWithoutTransport"), scraped.toString());
      assertTrue(scraped.get("startup_openMicros") > 0, scraped.toString());
      assertTrue(scraped.containsKey("startup_openWaitMicros"), scraped.toString());
      assertTrue(scraped.get("startup_firstConnectSumMicros") > 0, scraped.toString());
    }
  }

  /**
   * The open is held back until after the map tasks: they commit their outputs without waiting for
   * it, the open registers them once it has ended, and reducers that look an executor up before its
   * registration arrives are answered by the driver's book when it does, and READ.
   */
  @Test
  void mapTasksThatEndBeforeTheOpenLeaveTheirRegistrationToIt() throws Exception {
    SparkConf conf = PrometheusScrape.enable(LocalCluster.conf("startup-late", true))
        .set(RdmaShuffleManager.TEST_OPEN_DELAY.key(), "4000");
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      assertEquals(expected(), reduceByKey(sc));
      List<TransportReport> reports = TransportReports.collect(sc);
      assertEquals(LocalCluster.EXECUTORS, reports.size(), reports.toString());
      assertTrue(reports.stream().mapToInt(TransportReport::outputsRegisteredAfterOpen).sum() > 0, reports.toString());
      assertTrue(reports.stream().anyMatch(r -> r.bytesRead() > 0), reports.toString());
      Map<String, Long> scraped = PrometheusScrape.scrapeUntil(sc, "every executor's report",
          v -> v.getOrDefault("executors_reporting", 0L) >= LocalCluster.EXECUTORS);
      assertEquals(0, scraped.get("fallback_reduceTask_peerWithoutTransport"), scraped.toString());
    }
  }

  /**
   * The transport cannot listen (its port is taken) after its key pair, its shm arena and its
   * threads were set up, at once or after the map tasks have committed their outputs to it: the job
   * runs on Spark's shuffle, and the executors keep no transport thread and no arena.
   */
  @ParameterizedTest
  @ValueSource(ints = {0, 3000})
  void anOpenThatFailsPartWayLeavesNothingBehind(int openDelayMs, @TempDir Path shmDir) throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      SparkConf conf = LocalCluster.conf("startup-failure", true)
          .set(RdmaShuffleManager.TEST_OPEN_DELAY.key(), String.valueOf(openDelayMs))
          .set("spark.shuffle.rdma.transport.bindHost", "127.0.0.1")
          .set("spark.shuffle.rdma.transport.port", String.valueOf(taken.getLocalPort()))
          .set("spark.shuffle.rdma.transport.shm.dir", shmDir.toString());
      try (JavaSparkContext sc = LocalCluster.start(conf)) {
        assertEquals(expected(), reduceByKey(sc));
        assertEquals(List.of(), ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).registeredTransports());
        // The open's thread, and threads the failed open started, end after the open has failed:
        // ask every executor until none is left, or the deadline passes.
        Eventually.matches("every executor without a transport or a transport thread", Eventually.DEADLINE,
            () -> leftOnExecutors(sc),
            left -> left.size() == LocalCluster.EXECUTORS && left.values().stream().allMatch(List::isEmpty));
        try (Stream<Path> arenas = Files.list(shmDir)) {
          assertEquals(List.of(), arenas.map(p -> p.getFileName().toString()).toList(), "arenas left behind");
        }
      }
    }
  }
}
