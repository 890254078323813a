package io.sluice.lab.spark;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.spark.FetchFailed;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.RegisteredByteFlip;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple2;

/**
 * The lab's Spark corruption case over verbs: a reduceByKey runs once intact, one byte of what an
 * executor registered for one of its map outputs is inverted where READs are served from
 * ({@link RegisteredByteFlip}: the data file's page cache, or the registered copy of it), and the
 * job runs again on the same map outputs. The reducer that READs the changed block over verbs must refuse it with
 * a fetch failure naming the corrupt READ (its bytes do not match the CRC32C the owner computed
 * at registration), Spark reruns the map stage, and the answer is still right. Needs the
 * executors on this host (their local folders are listed from here) and local reads off.
 */
final class CorruptBlockStep {
  private static final long LISTENER_WAIT_MS = 60_000;

  private CorruptBlockStep() {}

  /** Runs the step on {@code sc}; the failures found, empty when it passed. */
  static List<String> run(JavaSparkContext sc, int rows, int partitions, int keys) {
    List<String> failures = new ArrayList<>();
    ConcurrentLinkedQueue<String> fetchFailures = new ConcurrentLinkedQueue<>();
    sc.sc().addSparkListener(new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.reason() instanceof FetchFailed f) {
          fetchFailures.add(f.message());
        }
      }
    });
    JavaPairRDD<Integer, Long> sums = sc.parallelize(LongStream.range(0, rows).boxed().toList(), partitions)
        .mapToPair(i -> new Tuple2<>((int) (i % keys), i))
        .reduceByKey(Long::sum, partitions);
    Map<Integer, Long> expected = new TreeMap<>();
    LongStream.range(0, rows).forEach(i -> expected.merge((int) (i % keys), i, Long::sum));
    try {
      if (!expected.equals(new TreeMap<>(sums.collectAsMap()))) {
        failures.add("corruption step: the intact run answered wrong");
      }
      drain(sc);
      if (!fetchFailures.isEmpty()) {
        failures.add("corruption step: fetch failures before anything was changed: " + fetchFailures);
      }
      int shuffleId = ((ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head()).shuffleId();
      Path data = dataFiles(sc, shuffleId).get(0);
      long mapId = Long.parseLong(data.getFileName().toString().split("_")[2]);
      String dataPath = data.toString();
      // On the executor that registered it (every task tries; the one holding it changes it).
      List<String> changed = sc.parallelize(IntStream.range(0, 8).boxed().toList(), 8)
          .flatMap(i -> RegisteredByteFlip.flip(shuffleId, mapId, partitions, Path.of(dataPath)).stream().iterator())
          .collect();
      if (changed.size() != 1) {
        failures.add("corruption step: " + changed.size() + " executors changed map " + mapId + ": " + changed);
        return failures;
      }
      System.out.println("VERBS-SPARK corruption step: " + changed.get(0));
      if (!expected.equals(new TreeMap<>(sums.collectAsMap()))) {
        failures.add("corruption step: the run after the change answered wrong");
      }
      drain(sc);
      List<String> corrupt = fetchFailures.stream().filter(m -> m.contains("corrupt READ")).toList();
      if (corrupt.isEmpty()) {
        failures.add("corruption step: no fetch failure named a corrupt READ of " + data + "; fetch failures: "
            + fetchFailures);
      } else {
        System.out.println("VERBS-SPARK corruption step: fetch failure: " + corrupt.get(0));
        if (!corrupt.get(0).contains("shuffle_" + shuffleId + "_" + mapId + "_")) {
          failures.add("corruption step: the fetch failure names another map output than " + data.getFileName());
        }
      }
    } catch (IOException e) {
      failures.add("corruption step: " + e);
    }
    return failures;
  }

  private static void drain(JavaSparkContext sc) {
    try {
      sc.sc().listenerBus().waitUntilEmpty(LISTENER_WAIT_MS);
    } catch (TimeoutException e) {
      throw new IllegalStateException("Spark's listener bus did not drain within " + LISTENER_WAIT_MS + " ms", e);
    }
  }

  /** The non-empty committed data files of a shuffle, in name order (the executors' folders, read from here). */
  private static List<Path> dataFiles(JavaSparkContext sc, int shuffleId) throws IOException {
    List<String> dirs = sc.parallelize(IntStream.range(0, 8).boxed().toList(), 8)
        .flatMap(i -> Arrays.stream(SparkEnv.get().blockManager().diskBlockManager().localDirs())
            .map(File::getAbsolutePath).iterator())
        .distinct().collect();
    String prefix = "shuffle_" + shuffleId + "_";
    List<Path> files = new ArrayList<>();
    for (String d : dirs) {
      try (Stream<Path> walk = Files.walk(Path.of(d))) {
        walk.filter(p -> p.getFileName().toString().startsWith(prefix) && p.toString().endsWith(".data"))
            .filter(p -> p.toFile().length() > 0).forEach(files::add);
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
    if (files.isEmpty()) {
      throw new IOException("no data file of shuffle " + shuffleId + " below " + dirs);
    }
    files.sort(null);
    return files;
  }


}
