package io.sluice.lab.spark;

import io.sluice.spark.shuffle.TransportReport;
import java.util.ArrayList;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import org.apache.spark.shuffle.rdma.TransportReports;
import io.sluice.perf.spark.SparkApps;
import java.util.stream.LongStream;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The SoftRoCE lab's Spark check (testing/softroce/checks/spark-verbs.sh): one small job (a
 * groupByKey of every row, then a sum per key), first with RdmaShuffleManager on
 * {@code local-cluster[2,1,MEM]} with the {@code verbs} provider on the lab's RDMA device, then
 * with Spark's sort shuffle in local mode (after the first, so that it finds the driver's
 * classes loaded: everything is slow under emulation). Passes when both answers are equal and
 * the manager's own metrics show that the shuffle moved by verbs READs: every executor's
 * transport is {@code verbs}, its reducers READ bytes over {@code verbs} only, and those bytes
 * sum to Spark's shuffle bytes read (local reads are off: each byte was READ once by verbs; none
 * went another way). Then, in the same application, a byte of a committed map output changes on
 * disk and the job that reads it again must still answer right, through a fetch failure that
 * names the corrupt READ and a rerun of the map stage ({@link CorruptBlockStep}).
 *
 * <pre>
 *   VerbsLabJob DEVICE_ADDRESS EXECUTOR_CLASS_PATH ROWS EXECUTOR_MEMORY_MB
 * </pre>
 *
 * Needs SPARK_HOME (its jars launch the executors) and SPARK_SCALA_VERSION. Prints
 * {@code VERBS-SPARK ...} lines; exit status 0 when the check passes, 1 when it fails.
 */
public final class VerbsLabJob {
  private static final int KEYS = 1000;
  private static final int PARTITIONS = 4;
  private static final int EXECUTORS = 2;
  private static final int EXECUTOR_START_SECONDS = 600;
  private static final long LISTENER_WAIT_MS = 60_000;

  private VerbsLabJob() {}

  public static void main(String[] args) {
    if (args.length != 4) {
      System.err.println("usage: VerbsLabJob DEVICE_ADDRESS EXECUTOR_CLASS_PATH ROWS EXECUTOR_MEMORY_MB");
      System.exit(2);
    }
    String address = args[0];
    int rows = Integer.parseInt(args[2]);
    int executorMb = Integer.parseInt(args[3]);

    SparkConf conf = common("sluice-lab-verbs-shuffle", address)
        .setMaster("local-cluster[" + EXECUTORS + ",1," + executorMb + "]")
        .set("spark.executor.memory", executorMb + "m")
        .set("spark.executor.extraClassPath", args[1])
        .set("spark.shuffle.manager", RdmaShuffleManager.class.getName())
        .set("spark.shuffle.rdma.transport.provider", "verbs")
        .set("spark.shuffle.rdma.transport.bindHost", address)
        .set("spark.shuffle.rdma.transport.advertiseHost", address)
        .set("spark.shuffle.rdma.transport.shm.enabled", "false")
        // Under emulation a first connection (crypto and RDMA set-up in a fresh JVM) takes seconds:
        // a minute to connect and authenticate, where a real cluster keeps 10 s and 3 s.
        .set("spark.shuffle.rdma.transport.connectTimeoutMs", "60000")
        .set("spark.shuffle.rdma.transport.handshakeTimeoutMs", "60000")
        // Every block crosses the transport, a reducer's own executor's included, so that the
        // changed byte of the corruption step is READ (and checked) wherever its reducer runs.
        .set("spark.shuffle.rdma.localReads", "false");
    long t0 = System.nanoTime();
    List<Tuple2<Integer, Long>> verbsAnswer;
    List<TransportReport> reports;
    ShuffleReadTotals.Totals read;
    List<String> failures = new ArrayList<>();
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      SparkApps.awaitExecutors(sc.sc(), EXECUTORS, EXECUTOR_START_SECONDS);
      System.out.printf("VERBS-SPARK %d executors up in %.0f s%n", EXECUTORS, (System.nanoTime() - t0) / 1e9);
      ShuffleReadTotals totals = new ShuffleReadTotals();
      sc.sc().addSparkListener(totals);
      t0 = System.nanoTime();
      verbsAnswer = job(sc, rows);
      System.out.printf("VERBS-SPARK RdmaShuffleManager over verbs (local-cluster[%d,1,%d]): %d keys in %.0f s%n",
          EXECUTORS, executorMb, verbsAnswer.size(), (System.nanoTime() - t0) / 1e9);
      try {
        sc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS);
      } catch (TimeoutException e) {
        failures.add("Spark's listener bus did not drain within " + LISTENER_WAIT_MS + " ms");
      }
      read = totals.snapshot();
      reports = TransportReports.collect(sc);
      t0 = System.nanoTime();
      failures.addAll(CorruptBlockStep.run(sc, rows, PARTITIONS, KEYS));
      System.out.printf("VERBS-SPARK corruption step in %.0f s%n", (System.nanoTime() - t0) / 1e9);
    }
    reports.forEach(r -> System.out.println("VERBS-SPARK   " + r));
    System.out.printf("VERBS-SPARK shuffle read (Spark's metrics): %d B remote in %d blocks, %d B local in %d blocks%n",
        read.remoteBytes(), read.remoteBlocks(), read.localBytes(), read.localBlocks());

    t0 = System.nanoTime();
    List<Tuple2<Integer, Long>> sortAnswer;
    try (JavaSparkContext sc = new JavaSparkContext(common("sluice-lab-sort-shuffle", address)
        .setMaster("local[2]"))) {
      sortAnswer = job(sc, rows);
    }
    System.out.printf("VERBS-SPARK sort shuffle (local[2]): %d keys in %.0f s%n", sortAnswer.size(),
        (System.nanoTime() - t0) / 1e9);
    failures.addAll(check(sortAnswer, verbsAnswer, reports, read));
    failures.forEach(f -> System.out.println("VERBS-SPARK failed: " + f));
    System.out.println("VERBS-SPARK " + (failures.isEmpty() ? "PASS" : "FAIL"));
    System.exit(failures.isEmpty() ? 0 : 1);
  }

  /** What must hold after the verbs run; empty when everything does. */
  static List<String> check(List<Tuple2<Integer, Long>> sortAnswer, List<Tuple2<Integer, Long>> verbsAnswer,
      List<TransportReport> reports, ShuffleReadTotals.Totals read) {
    List<String> failures = new ArrayList<>();
    if (!sortAnswer.equals(verbsAnswer)) {
      failures.add("the answers differ: sort shuffle " + head(sortAnswer) + ", verbs " + head(verbsAnswer));
    }
    if (reports.size() != EXECUTORS) {
      failures.add("transport reports from " + reports.size() + " executors, expected " + EXECUTORS
          + " (did the manager fall back to the sort shuffle?)");
    }
    long verbsBytes = 0;
    for (TransportReport r : reports) {
      if (!r.provider().equals("verbs")) {
        failures.add("executor " + r.executorId() + " uses provider " + r.provider());
      }
      for (Map.Entry<String, Long> path : r.bytesReadByPath().entrySet()) {
        if (path.getKey().equals("verbs")) {
          verbsBytes += path.getValue();
        } else if (path.getValue() > 0) {
          failures.add("executor " + r.executorId() + " READ " + path.getValue() + " B over " + path.getKey());
        }
      }
    }
    if (read.remoteBytes() <= 0) {
      failures.add("no remote shuffle bytes: nothing crossed executors");
    }
    // With local reads off, a block of the reducer's own executor is READ over verbs too.
    if (verbsBytes != read.remoteBytes() + read.localBytes()) {
      failures.add("executors READ " + verbsBytes + " B over verbs, Spark counted " + read.remoteBytes()
          + " B remote and " + read.localBytes() + " B local");
    }
    return failures;
  }

  /**
   * Row i goes to key i % KEYS; the answer is each key's sum of its rows, in key order. One
   * shuffle that moves every row (groupByKey, no map-side combining), sorted on the driver.
   */
  static List<Tuple2<Integer, Long>> job(JavaSparkContext sc, int rows) {
    List<Tuple2<Integer, Long>> sums = new ArrayList<>(sc.parallelize(LongStream.range(0, rows).boxed().toList(), PARTITIONS)
        .mapToPair(i -> new Tuple2<>((int) (i % KEYS), i))
        .groupByKey(PARTITIONS)
        .mapToPair(t -> {
          long sum = 0;
          for (long v : t._2()) {
            sum += v;
          }
          return new Tuple2<>(t._1(), sum);
        })
        .collect());
    sums.sort((a, b) -> Integer.compare(a._1(), b._1()));
    return sums;
  }

  private static SparkConf common(String app, String address) {
    return new SparkConf()
        .setAppName(app)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", address)
        .set("spark.driver.bindAddress", address)
        // Under emulation everything is slow: generous network and heartbeat deadlines.
        .set("spark.network.timeout", "600s")
        .set("spark.executor.heartbeatInterval", "60s");
  }

  private static String head(List<Tuple2<Integer, Long>> answer) {
    Map<Integer, Long> first = new TreeMap<>();
    answer.stream().limit(3).forEach(t -> first.put(t._1(), t._2()));
    return answer.size() + " keys, first " + first;
  }
}
