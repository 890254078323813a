package io.sluice.lab.cluster;

import io.sluice.perf.cluster.DataPaths;
import io.sluice.perf.cluster.JobAudit;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.LongStream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * Checks that a shuffle survives dynamic allocation with the external shuffle service: a job
 * writes and reads a shuffle, every executor then idles out and is removed, and a second job
 * reads the same shuffle output (its map stage is skipped) through the hosts' shuffle services.
 * The answer must be right, and no stage may be retried and no task fail to fetch.
 *
 * <p>Submit it to a standalone cluster whose Workers run the shuffle service, with
 * {@code spark.shuffle.service.enabled=true}, {@code spark.dynamicAllocation.enabled=true},
 * {@code spark.dynamicAllocation.minExecutors=0} and a short {@code executorIdleTimeout}
 * ({@code testing/cluster/ci} shows how). Arguments: {@code [rows] [reducers]}. Exits with 1 and
 * says why when a check fails.
 */
public final class DynamicAllocationCheck {
  private static final int KEYS = 50_000;

  private DynamicAllocationCheck() {}

  public static void main(String[] args) throws InterruptedException, TimeoutException {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000L;
    int reducers = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    SparkConf conf = new SparkConf().setAppName("sluice-dynamic-allocation-check");
    requireSetting(conf, "spark.shuffle.service.enabled", "true");
    requireSetting(conf, "spark.dynamicAllocation.enabled", "true");
    int failures = 0;
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      JobAudit audit = new JobAudit();
      sc.sc().addSparkListener(audit);
      int executors = conf.getInt("spark.dynamicAllocation.initialExecutors", 2);
      int maps = 4 * executors;
      awaitExecutors(sc, executors);
      // Map task k generates a contiguous k-th of the rows, so every map output holds every key and
      // every reducer reads from every map output.
      JavaPairRDD<Long, Long> sums = sc.parallelize(LongStream.range(0, maps).boxed().toList(), maps)
          .flatMapToPair(slice -> LongStream.range(slice * rows / maps, (slice + 1) * rows / maps)
              .mapToObj(i -> new Tuple2<>(i % KEYS, i)).iterator())
          .reduceByKey(Long::sum, reducers);
      Map<Long, Long> expected = expected(rows);

      System.out.println("job 1: write and read the shuffle");
      Map<Long, Long> first = new TreeMap<>(sums.collectAsMap());
      sc.sc().listenerBus().waitUntilEmpty(30_000);
      JobAudit.Totals afterFirst = audit.snapshot();
      List<DataPaths.Report> reports = DataPaths.collect(sc, 2);
      System.out.println("  " + (first.equals(expected) ? "answer correct" : "WRONG ANSWER") + "; executors "
          + afterFirst.executorsAdded() + ", stages " + afterFirst.stagesSubmitted() + ", remote "
          + afterFirst.remoteBytes() + " B, local " + afterFirst.localBytes() + " B");
      reports.forEach(r -> System.out.println("  executor " + r.executorId() + ": " + r.provider() + ", READ "
          + r.bytesReadByPath()));
      if (!first.equals(expected)) {
        failures++;
      }
      Map<String, Long> paths = DataPaths.total(reports);
      if (reports.isEmpty() || paths.getOrDefault("tcp", 0L) == 0 || paths.getOrDefault("shm", 0L) != 0) {
        System.out.println("FAILED: job 1 should READ between the hosts over tcp and never through shm; READ " + paths);
        failures++;
      }

      long idleDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      System.out.println("waiting for every executor to idle out");
      while (!sc.sc().getExecutorIds().isEmpty()) {
        if (System.nanoTime() > idleDeadline) {
          throw new IllegalStateException("executors " + sc.sc().getExecutorIds()
              + " were not removed within 120 s; is spark.dynamicAllocation.executorIdleTimeout short?");
        }
        Thread.sleep(250);
      }
      sc.sc().listenerBus().waitUntilEmpty(30_000);
      JobAudit.Totals idle = audit.snapshot();
      System.out.println("  executors removed: " + idle.executorsRemoved());

      System.out.println("job 2: read the same shuffle output on new executors");
      Map<Long, Long> second = new TreeMap<>(sums.collectAsMap());
      sc.sc().listenerBus().waitUntilEmpty(30_000);
      JobAudit.Totals job2 = audit.snapshot().minus(idle);
      boolean right = second.equals(expected);
      System.out.println("  " + (right ? "answer correct" : "WRONG ANSWER") + "; stages submitted "
          + job2.stagesSubmitted() + ", stage retries " + job2.stageRetries() + ", fetch failures "
          + job2.fetchFailures() + ", executors added " + job2.executorsAdded() + ", remote "
          + job2.remoteBytes() + " B, local " + job2.localBytes() + " B, records " + job2.recordsRead());
      JobAudit.Totals all = audit.snapshot();
      if (!right) {
        failures++;
      }
      if (idle.executorsRemoved() < afterFirst.executorsAdded()) {
        System.out.println("FAILED: not every executor of job 1 was removed before job 2");
        failures++;
      }
      if (job2.stagesSubmitted() != 1) {
        System.out.println("FAILED: job 2 should run its reduce stage only (the map output is kept), ran "
            + job2.stagesSubmitted() + " stages");
        failures++;
      }
      if (all.stageRetries() > 0 || all.fetchFailures() > 0) {
        System.out.println("FAILED: " + all.fetchFailures() + " fetch failures, retried stages " + all.retriedStages());
        failures++;
      }
    }
    System.out.println(failures == 0 ? "dynamic allocation check passed" : "dynamic allocation check FAILED");
    System.exit(failures == 0 ? 0 : 1);
  }

  private static void awaitExecutors(JavaSparkContext sc, int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (sc.sc().getExecutorIds().size() < count) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(count + " executors did not start within 120 s");
      }
      Thread.sleep(200);
    }
  }

  private static Map<Long, Long> expected(long rows) {
    Map<Long, Long> sums = new TreeMap<>();
    for (long i = 0; i < rows; i++) {
      sums.merge(i % KEYS, i, Long::sum);
    }
    return sums;
  }

  private static void requireSetting(SparkConf conf, String key, String value) {
    if (!conf.get(key, "").equals(value)) {
      throw new IllegalArgumentException("submit with --conf " + key + "=" + value);
    }
  }
}
