package io.sluice.testing.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaFutureAction;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * RdmaShuffleManager on YARN: applications in client mode on a {@link YarnMiniCluster}, whose
 * executors are containers the NodeManager launches and kills, with the NodeManager's shuffle
 * service ({@link StandInShuffleService}) and dynamic allocation on. Answers are compared with
 * values computed here without Spark; what went through Sluice's transport and what through its
 * fallback is read from Sluice's own metrics on the driver, and what the shuffle service sent
 * from the service's metrics.
 */
class RdmaShuffleOnYarnTest {
  private static final long ROWS = 200_000;
  private static final long KEYS = 1_000;
  private static final int MAPS = 4;
  private static final int REDUCERS = 4;
  private static final int SECOND_REDUCERS = 3;
  private static final String REDUCE_TASKS_ON_TRANSPORT = "decisions.reduceTask.transport";
  private static final String REDUCE_TASKS_EXECUTOR_REMOVED = "fallback.reduceTask.executorRemoved";

  private static YarnMiniCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster = YarnMiniCluster.start("sluice-yarn");
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Job 1 shuffles on two executors, which READ each other's blocks through the transport; both
   * then idle out and YARN takes their containers back. Job 2 runs on new executors: it re-reads
   * job 1's shuffle, whose map outputs now only the shuffle service holds (every such reduce task
   * must take the fallback to Spark's reader), and shuffles that again through the transport.
   */
  @Test
  void executorsReleasedAndRequestedAgainMidApplication() throws Exception {
    JobEvents events = new JobEvents();
    try (JavaSparkContext sc = new JavaSparkContext(SparkOnYarn.conf(cluster, "sluice-yarn-dynamic-allocation"))) {
      // Both executors are up before the first job, so each runs map tasks and every reducer has a remote block.
      SparkOnYarn.awaitBusyExecutors(sc);
      sc.sc().addSparkListener(events);
      long servedBefore = cluster.shuffleServiceBytesSent();
      JavaPairRDD<Long, Long> sums = sums(sc);

      assertEquals(expectedSums(), SparkOnYarn.collectSorted(sums), "job 1's answer");
      Map<String, Long> job1 = SparkOnYarn.awaitSluiceMetrics("job 1's reduce tasks and READs in the executors' reports",
          m -> m.get(REDUCE_TASKS_ON_TRANSPORT) >= REDUCERS && SparkOnYarn.transportBytesRead(m) > 0);
      assertEquals(REDUCERS, job1.get(REDUCE_TASKS_ON_TRANSPORT), "job 1's reduce tasks on the transport: " + job1);
      assertTrue(SparkOnYarn.transportBytesRead(job1) > 0, "job 1 READ nothing through the transport: " + job1);
      assertEquals(0, job1.get(REDUCE_TASKS_EXECUTOR_REMOVED), job1.toString());
      assertEquals(0, job1.get("fallback.executor.transportStartFailed"), job1.toString());
      assertEquals(servedBefore, cluster.shuffleServiceBytesSent(),
          "the shuffle service sent blocks while every executor that wrote them was alive");

      SparkOnYarn.awaitNoExecutors(sc);
      // The scheduler forgets an executor before it posts the removal to the listeners.
      Eventually.reaches("executors released after job 1", SparkOnYarn.EXECUTORS,
          () -> events.removedExecutors().size());

      JavaPairRDD<Long, Long> byLastDigit = sums.mapToPair(t -> new Tuple2<>(t._1() % 10, t._2()))
          .reduceByKey(Long::sum, SECOND_REDUCERS);
      assertEquals(expectedByLastDigit(), SparkOnYarn.collectSorted(byLastDigit), "job 2's answer");
      Map<String, Long> job2 = SparkOnYarn.awaitSluiceMetrics("job 2's reduce tasks in the executors' reports",
          m -> m.get(REDUCE_TASKS_EXECUTOR_REMOVED) >= REDUCERS && m.get(REDUCE_TASKS_ON_TRANSPORT) >= REDUCERS + SECOND_REDUCERS);
      assertEquals(REDUCERS, job2.get(REDUCE_TASKS_EXECUTOR_REMOVED),
          "job 2's re-reads of the released executors' output, through the fallback: " + job2);
      assertEquals(REDUCERS + SECOND_REDUCERS, job2.get(REDUCE_TASKS_ON_TRANSPORT),
          "reduce tasks on the transport, job 2's new shuffle included: " + job2);
      Eventually.holds("the shuffle service's meter counts the released executors' output",
          () -> cluster.shuffleServiceBytesSent() > servedBefore);

      sc.sc().listenerBus().waitUntilEmpty(TimeUnit.SECONDS.toMillis(30));
      // Job 1: map and reduce stage. Job 2: job 1's map stage is skipped (its output outlived its
      // executors), then the stage that re-reads it and writes the new shuffle, and the result stage.
      assertEquals(4, events.stages().size(), "stages submitted: " + events.stages());
      assertTrue(events.stages().stream().allMatch(s -> s.attempt() == 0), "stages retried: " + events.stages());
      assertEquals(0, events.fetchFailures(), "fetch failures");
    }
  }

  /**
   * A reduce task blocks until its executor's container is killed (SIGKILL by the NodeManager, on
   * the ResourceManager's request) after the stage's other tasks are done; Spark must rerun it on
   * another executor, which reads the killed executor's map output through the fallback from the
   * shuffle service, and the job must answer right.
   */
  @Test
  void executorKilledByTheNodeManagerMidStage() throws Exception {
    JobEvents events = new JobEvents();
    try (JavaSparkContext sc = new JavaSparkContext(SparkOnYarn.conf(cluster, "sluice-yarn-container-kill"))) {
      // Both executors run map tasks: whichever the kill takes, its map output outlives it.
      SparkOnYarn.awaitBusyExecutors(sc);
      sc.sc().addSparkListener(events);
      ReduceStageWatch watch = new ReduceStageWatch();
      sc.sc().addSparkListener(watch);
      long servedBefore = cluster.shuffleServiceBytesSent();

      JavaFutureAction<List<Tuple2<Long, Long>>> job = sums(sc)
          .mapPartitionsWithIndex((partition, records) -> {
            if (partition == 0 && TaskContext.get().attemptNumber() == 0) {
              waitToBeKilled();
            }
            return records;
          }, true)
          .collectAsync();
      String executor = watch.blockedExecutor(60);
      // Killed once the other reduce tasks are done, so no READ from it is in flight: the kill then
      // costs exactly the blocked task (a reader cut off mid-READ would be a fetch failure and a
      // rerun of the map stage, which spark-shuffle's ExecutorKillTest covers).
      watch.awaitOtherPartitions(60);
      String container = SparkOnYarn.containerOf(sc, executor)
          .orElseThrow(() -> new AssertionError("Spark named no YARN container for executor " + executor));
      cluster.killContainer(container);
      Map<Long, Long> got = new TreeMap<>();
      SparkOnYarn.await(job).forEach(t -> got.put(t._1(), t._2()));

      assertEquals(expectedSums(), got, "the answer after the kill");
      sc.sc().listenerBus().waitUntilEmpty(TimeUnit.SECONDS.toMillis(30));
      Eventually.matches("executor " + executor + " removed for its container's exit by SIGKILL (137)",
          Eventually.DEADLINE, () -> events.removalReason(executor).orElse(""),
          reason -> reason.contains(container) && reason.contains("137"));
      int resultStage = events.stages().get(events.stages().size() - 1).stageId();
      assertEquals(List.of(new JobEvents.LostTask(resultStage, 0, 0, executor)), events.lostTasks(),
          "tasks lost with their executor");
      // With the shuffle service the killed executor's map output stays registered: the lost task
      // reruns in the same stage attempt, and no stage is resubmitted.
      assertEquals(2, events.stages().size(), "stages submitted: " + events.stages());
      assertTrue(events.stages().stream().allMatch(s -> s.attempt() == 0), "stages retried: " + events.stages());
      assertEquals(0, events.fetchFailures(), "fetch failures");
      // The rerun READ nothing from the dead executor: its map output came from the shuffle service.
      SparkOnYarn.awaitSluiceMetrics("the rerun's fallback in the executors' reports",
          m -> m.get(REDUCE_TASKS_EXECUTOR_REMOVED) >= 1);
      Eventually.holds("the shuffle service's meter counts the killed executor's output",
          () -> cluster.shuffleServiceBytesSent() > servedBefore);
    }
  }

  /** Job 1's shuffle: every map task writes a contiguous slice of the rows, every key in each slice. */
  private static JavaPairRDD<Long, Long> sums(JavaSparkContext sc) {
    return sc.parallelize(LongStream.range(0, MAPS).boxed().toList(), MAPS)
        .flatMapToPair(slice -> LongStream.range(slice * ROWS / MAPS, (slice + 1) * ROWS / MAPS)
            .mapToObj(i -> new Tuple2<>(i % KEYS, i)).iterator())
        .reduceByKey(Long::sum, REDUCERS);
  }

  private static Map<Long, Long> expectedSums() {
    Map<Long, Long> sums = new TreeMap<>();
    for (long i = 0; i < ROWS; i++) {
      sums.merge(i % KEYS, i, Long::sum);
    }
    return sums;
  }

  private static Map<Long, Long> expectedByLastDigit() {
    Map<Long, Long> sums = new TreeMap<>();
    for (long i = 0; i < ROWS; i++) {
      sums.merge(i % KEYS % 10, i, Long::sum);
    }
    return sums;
  }

  /** In the executor: sleeps until this JVM is killed; fails the task if that takes over 90 s. */
  private static void waitToBeKilled() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      Thread.sleep(200);
    }
    throw new IllegalStateException("this executor's container was not killed within 90 s");
  }

  /**
   * Watches the result stage of the job that follows: which executor runs the first attempt of
   * partition 0, and when every other partition has succeeded.
   */
  private static final class ReduceStageWatch extends SparkListener {
    private final CompletableFuture<String> blockedExecutor = new CompletableFuture<>();
    private final CountDownLatch othersDone = new CountDownLatch(REDUCERS - 1);
    private volatile int resultStage = -1;

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      if (submitted.stageInfo().shuffleDepId().isEmpty()) {
        resultStage = submitted.stageInfo().stageId();
      }
    }

    @Override
    public void onTaskStart(SparkListenerTaskStart start) {
      if (start.stageId() == resultStage && start.taskInfo().partitionId() == 0
          && start.taskInfo().attemptNumber() == 0) {
        blockedExecutor.complete(start.taskInfo().executorId());
      }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.stageId() == resultStage && end.taskInfo().partitionId() != 0 && end.taskInfo().successful()) {
        othersDone.countDown();
      }
    }

    /** The executor of partition 0's first attempt, once it started. */
    String blockedExecutor(long timeoutSeconds) throws Exception {
      return blockedExecutor.get(timeoutSeconds, TimeUnit.SECONDS);
    }

    void awaitOtherPartitions(long timeoutSeconds) throws InterruptedException {
      if (!othersDone.await(timeoutSeconds, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the other reduce tasks did not finish within " + timeoutSeconds + " s");
      }
    }
  }
}
