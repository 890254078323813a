package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import io.sluice.transport.Eventually;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Blocks of an executor on the same host are deserialized from read-only views of its registered
 * data files ({@code spark.shuffle.rdma.sameHostViews}), not copied: no READ destination is ever
 * made, and every view is let go when the task's iterator moves past it, when the task fails in
 * the middle of its input, or when it stops reading early. A view held while its owner executor is
 * killed and its files are deleted still reads the owner's bytes; one whose owner's file is cut
 * short under it fails the fetch, and the executor lives. Local reads are off, so every block, the
 * reducer's own executor's too, goes through the transport.
 */
class SameHostViewsTest {
  private static final int ROWS = 60_000;

  private static SparkConf conf(String name) {
    return LocalCluster.conf(name, true).set(RdmaShuffleOption.LOCAL_READS.key(), "false");
  }

  private static Map<Integer, Long> expectedSums() {
    Map<Integer, Long> expected = new TreeMap<>();
    SharedJobs.range(ROWS).forEach(i -> expected.merge(i % 1000, (long) i, Long::sum));
    return expected;
  }

  @Test
  @Timeout(300)
  void viewsReplaceCopiesAndAreLetGoWhenATaskFailsOrStopsMidRead() {
    try (JavaSparkContext sc = LocalCluster.start(conf("views"))) {
      JavaPairRDD<Integer, Long> sums = sc.parallelize(SharedJobs.range(ROWS), 6)
          .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
          .reduceByKey(Long::sum, 4);
      assertEquals(expectedSums(), new TreeMap<>(sums.collectAsMap()));
      assertNoViewHeld(sc);
      List<TransportReport> reports = TransportReports.collect(sc);
      long viewed = 0;
      for (TransportReport r : reports) {
        assertEquals(r.bytesReadByPath().getOrDefault("shm", 0L), r.bytesViewed(), "every shm byte is a view: " + r);
        assertEquals(0, r.destinationPeakBytes(), "a READ destination was made: " + r);
        viewed += r.bytesViewed();
      }
      assertTrue(viewed > 0, "nothing was viewed: " + reports);

      // Records stream from the blocks to the task (no aggregation or sort in between): each reduce
      // task's first attempt fails after its first record; the retries read it all.
      JavaPairRDD<Integer, Long> pairs = sc.parallelize(SharedJobs.range(ROWS), 6)
          .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
          .partitionBy(new org.apache.spark.HashPartitioner(4));
      List<Long> totals = pairs.mapPartitions(it -> {
        Tuple2<Integer, Long> first = it.next();
        if (TaskContext.get().attemptNumber() == 0) {
          throw new IllegalStateException("a reduce task failing mid-read after key " + first._1());
        }
        long total = first._2();
        while (it.hasNext()) {
          total += it.next()._2();
        }
        return List.of(total).iterator();
      }).collect();
      assertEquals(expectedSums().values().stream().mapToLong(Long::longValue).sum(),
          totals.stream().mapToLong(Long::longValue).sum());
      assertNoViewHeld(sc);

      // Tasks that take one record and leave the rest unread.
      assertEquals(4, pairs.mapPartitions(it -> List.of(it.next()).iterator()).count());
      assertNoViewHeld(sc);
    }
  }

  /**
   * One reduce task reads until its current block comes from the other executor, so that it holds
   * a view of that executor's file; the test kills that executor and deletes its data files; the
   * task then reads the rest of the block from the view and checks it against what the map task
   * wrote. It stops there (the dead executor's other blocks are gone).
   */
  @Test
  @Timeout(300)
  void aViewHeldWhileItsOwnerIsKilledStillReadsTheOwnersBytes(@TempDir Path signals) throws Exception {
    int maps = 8;
    int perMap = 4_000;
    try (JavaSparkContext sc = LocalCluster.start(conf("views-kill"))) {
      String appId = sc.sc().applicationId();
      Map<String, List<String>> dirs = localDirs(sc);
      String dir = signals.toString();
      // Each record carries the executor and the map partition that wrote it.
      JavaPairRDD<Integer, String> tagged = tagged(sc, maps, perMap, dir, (self, p, i) -> self + "/" + p);
      Thread killer = new Thread(() -> killWhenAsked(appId, Path.of(dir), dirs), "executor-killer");
      killer.setDaemon(true);
      killer.start();
      List<String> verdict = tagged.mapPartitions(it -> {
        String self = SparkEnv.get().executorId();
        while (it.hasNext()) {
          Tuple2<Integer, String> r = it.next();
          String owner = r._2().split("/")[0];
          if (owner.equals(self)) {
            continue;
          }
          int map = Integer.parseInt(r._2().split("/")[1]);
          FileSignals.signal(Path.of(dir), "kill", owner);
          FileSignals.await(Path.of(dir), "killed", 1, 120);
          // The rest of this block comes from the view of the dead executor's deleted file.
          List<Integer> keys = new ArrayList<>(List.of(r._1()));
          while (it.hasNext()) {
            Tuple2<Integer, String> next = it.next();
            if (!next._2().equals(r._2())) {
              break;
            }
            keys.add(next._1());
          }
          keys.sort(null);
          List<Integer> wrote = new ArrayList<>();
          for (int i = map * perMap; i < (map + 1) * perMap; i++) {
            wrote.add(i);
          }
          return List.of(keys.equals(wrote) ? "read map " + map + " of executor " + owner + " whole"
              : "map " + map + " of executor " + owner + " read back as " + keys.size() + " other keys").iterator();
        }
        return List.of("no block of another executor").iterator();
      }).collect();
      assertTrue(Files.exists(signals.resolve("killed")), "no executor was killed: " + verdict);
      String killed = FileSignals.read(signals, "kill");
      assertEquals(1, verdict.size());
      assertTrue(verdict.get(0).startsWith("read map ") && verdict.get(0).endsWith(" of executor " + killed + " whole"),
          verdict.get(0));
      assertNoViewHeld(sc);
    }
  }

  /**
   * One reduce task reads until its current block comes from the other executor, so that it holds
   * a view of that executor's data file and has read the first chunk of the block from it; it then
   * cuts every data file of that executor to nothing, as any process of the executors' user may,
   * and reads on. The rest of the block (or the next one checked) is a fetch failure naming the cut
   * file, where a read through the mapping would fault and end the reader's executor: no executor
   * is lost, the stage that wrote the cut outputs runs again, and the job counts every record.
   */
  @Test
  @Timeout(300)
  void aFileCutUnderAViewIsAFetchFailureAndNoExecutorIsLost(@TempDir Path signals) throws Exception {
    int maps = 8;
    int perMap = 3_000;
    try (JavaSparkContext sc = LocalCluster.start(conf("views-cut"))) {
      FetchFailureMessages fetchFailures = FetchFailureMessages.of(sc);
      ExecutorsRemoved removed = new ExecutorsRemoved();
      sc.sc().addSparkListener(removed);
      Set<String> executors = executorIds(sc);
      Map<String, List<String>> dirs = localDirs(sc);
      String dir = signals.toString();
      // Each record carries the executor that wrote it and 100 random letters, so that each map
      // output's one block spans several of the reader's chunks.
      JavaPairRDD<Integer, String> tagged =
          tagged(sc, maps, perMap, dir, (self, p, i) -> self + "/" + letters(new Random(i), 100));
      long records = tagged.mapPartitions(it -> {
        String self = SparkEnv.get().executorId();
        long n = 0;
        while (it.hasNext()) {
          String owner = it.next()._2().split("/")[0];
          n++;
          if (!owner.equals(self) && claim(Path.of(dir), "cut-claimed")) {
            FileSignals.signal(Path.of(dir), "cut", owner + " " + cutDataFiles(dirs.getOrDefault(owner, List.of())));
          }
        }
        return List.of(n).iterator();
      }).reduce(Long::sum);
      assertEquals((long) maps * perMap, records);
      assertTrue(Files.exists(signals.resolve("cut")), "no data file was cut");
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertEquals(List.of(), removed.ids(), "executors lost");
      assertEquals(executors, executorIds(sc));
      List<String> failures = fetchFailures.messages();
      assertTrue(!failures.isEmpty() && failures.get(0).contains("was cut to 0 bytes"),
          "the cut (" + FileSignals.read(signals, "cut") + ") was not a fetch failure naming it: " + failures);
      assertNoViewHeld(sc);
    }
  }

  /** A record's value, from the executor and the map partition that wrote it and its key. */
  private interface Tag extends java.io.Serializable {
    String of(String executor, int map, int key);
  }

  /**
   * {@code maps * perMap} keys written by {@code maps} map tasks, each key with the value {@code tag}
   * gives it, all in one reduce partition. Each map task waits (signals in folder {@code dir}) until
   * both executors run one, so that both hold map output.
   */
  private static JavaPairRDD<Integer, String> tagged(JavaSparkContext sc, int maps, int perMap, String dir, Tag tag) {
    return sc.parallelize(SharedJobs.range(maps * perMap), maps)
        .mapPartitionsWithIndex((p, it) -> {
          String self = SparkEnv.get().executorId();
          FileSignals.signal(Path.of(dir), "map-" + self, self);
          FileSignals.await(Path.of(dir), "map-", LocalCluster.EXECUTORS, 120);
          List<Tuple2<Integer, String>> out = new ArrayList<>();
          it.forEachRemaining(i -> out.add(new Tuple2<>(i, tag.of(self, p, i))));
          return out.iterator();
        }, true)
        .mapToPair(t -> t)
        .partitionBy(new org.apache.spark.HashPartitioner(1));
  }

  private static String letters(Random random, int n) {
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) ('a' + random.nextInt(26)));
    }
    return b.toString();
  }

  /** Whether this call created {@code name} in {@code folder}: true for exactly one caller. */
  private static boolean claim(Path folder, String name) throws IOException {
    try {
      Files.createFile(folder.resolve(name));
      return true;
    } catch (FileAlreadyExistsException e) {
      return false;
    }
  }

  /** Cuts every shuffle data file below {@code dirs} to 0 bytes; how many it cut. */
  private static int cutDataFiles(List<String> dirs) throws IOException {
    int cut = 0;
    for (String d : dirs) {
      try (var walk = Files.walk(Path.of(d))) {
        for (Path p : walk.filter(p -> p.getFileName().toString().endsWith(".data")).toList()) {
          try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
            ch.truncate(0);
            cut++;
          }
        }
      }
    }
    return cut;
  }

  private static Set<String> executorIds(JavaSparkContext sc) {
    return new TreeSet<>(CollectionConverters.asJava(sc.sc().getExecutorIds()));
  }

  /** The executors the driver saw removed. Thread safe. */
  private static final class ExecutorsRemoved extends SparkListener {
    private final List<String> ids = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Override
    public void onExecutorRemoved(SparkListenerExecutorRemoved removed) {
      ids.add(removed.executorId() + " (" + removed.reason() + ")");
    }

    List<String> ids() {
      return List.copyOf(ids);
    }
  }

  /** Waits for the reduce task's request, kills that executor, deletes its data files, answers. */
  private static void killWhenAsked(String appId, Path signals, Map<String, List<String>> localDirs) {
    try {
      FileSignals.await(signals, "kill", 1, 240);
      String executor = FileSignals.read(signals, "kill");
      Optional<Long> pid = ExecutorProcesses.kill(appId, executor);
      if (pid.isEmpty()) {
        throw new IllegalStateException("no process for executor " + executor);
      }
      for (String d : localDirs.getOrDefault(executor, List.of())) {
        try (var walk = Files.walk(Path.of(d))) {
          for (Path p : walk.filter(p -> p.getFileName().toString().endsWith(".data")).toList()) {
            Files.deleteIfExists(p);
          }
        }
      }
      FileSignals.signal(signals, "killed", Long.toString(pid.get()));
    } catch (IOException | RuntimeException e) {
      System.err.println("executor-killer: " + e);
    }
  }

  /** Each executor's block-manager folders, asked until every executor has answered. */
  private static Map<String, List<String>> localDirs(JavaSparkContext sc) {
    return Eventually.matches("the block-manager folders of every executor", Eventually.DEADLINE,
        () -> localDirsOfThoseAsked(sc), dirs -> dirs.size() == LocalCluster.EXECUTORS);
  }

  /** The block-manager folders of the executors that ran a task of one 16-task job. */
  private static Map<String, List<String>> localDirsOfThoseAsked(JavaSparkContext sc) {
    Map<String, List<String>> dirs = new TreeMap<>();
    sc.parallelize(SharedJobs.range(16), 16).map(i -> {
      StringBuilder b = new StringBuilder(SparkEnv.get().executorId());
      for (java.io.File f : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
        b.append('\n').append(f.getAbsolutePath());
      }
      return b.toString();
    }).collect().forEach(line -> {
      String[] parts = line.split("\n");
      List<String> mine = dirs.computeIfAbsent(parts[0], k -> new ArrayList<>());
      for (int i = 1; i < parts.length; i++) {
        if (!mine.contains(parts[i])) {
          mine.add(parts[i]);
        }
      }
    });
    return dirs;
  }

  /** Waits until every executor has let go of every view its reduce tasks took; an abandoned one goes when its fetch ends. */
  private static void assertNoViewHeld(JavaSparkContext sc) {
    Eventually.matches("no executor holds a view after every task ended", Eventually.DEADLINE,
        () -> TransportReports.collect(sc), reports -> reports.stream().allMatch(r -> r.viewsHeld() == 0));
  }
}
