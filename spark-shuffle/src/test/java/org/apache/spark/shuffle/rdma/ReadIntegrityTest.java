package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import scala.Tuple2;

/**
 * A byte of a registered map output's data file changes on disk after its map stage committed:
 * the bytes reducers then READ differ from those the owner checksummed at registration. The
 * reduce task must raise a fetch failure naming the corrupt READ (never hand the bytes to the
 * deserializer), with Spark's diagnosis of the block (its checksum file says the disk changed),
 * Spark reruns the map stage, and the job returns the right answer. Over the tcp data path and
 * over shm, where every block crosses the transport (local reads off); and with local reads on,
 * where a reducer reads its own executor's changed file first.
 */
class ReadIntegrityTest {
  private static final int ROWS = 100_000;

  @ParameterizedTest(name = "over {0}")
  @ValueSource(strings = {"tcp", "shm", "local"})
  @Timeout(300)
  void aByteFlippedInARegisteredDataFileIsAFetchFailureNamingTheCorruptRead(String path) throws Exception {
    boolean local = path.equals("local");
    SparkConf conf = LocalCluster.conf("integrity-" + path, true)
        .set(RdmaShuffleOption.LOCAL_READS.key(), Boolean.toString(local))
        .set("spark.shuffle.rdma.transport.shm.enabled", Boolean.toString(!path.equals("tcp")));
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      FetchFailureMessages fetchFailures = FetchFailureMessages.of(sc);
      JavaPairRDD<Integer, Long> sums = sc.parallelize(SharedJobs.range(ROWS), 4)
          .mapToPair(i -> new Tuple2<>(i % 1000, (long) i))
          .reduceByKey(Long::sum, 4);
      Map<Integer, Long> expected = new TreeMap<>();
      SharedJobs.range(ROWS).forEach(i -> expected.merge(i % 1000, (long) i, Long::sum));

      // The first job runs the map stage, whose outputs are registered (and checksummed) as they
      // commit, and reads them intact.
      assertEquals(expected, new TreeMap<>(sums.collectAsMap()));
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertEquals(List.of(), fetchFailures.messages(), "fetch failures before anything was corrupted");

      int shuffleId = ((ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head()).shuffleId();
      List<Path> files = dataFiles(sc, shuffleId);
      Path data = files.get(0);
      long at = Files.size(data) / 2;
      byte before = flipByte(data, at);
      if (local) {
        // Every block of every map output changes, so each reducer's first, local, block is one.
        for (Path f : files) {
          long[] offsets = partitionOffsets(f);
          for (int p = 0; p + 1 < offsets.length; p++) {
            if (offsets[p + 1] > offsets[p] && !(f.equals(data) && offsets[p] <= at && at < offsets[p + 1])) {
              flipByte(f, offsets[p] + (offsets[p + 1] - offsets[p]) / 2);
            }
          }
        }
      }

      // The second job reuses the committed map outputs: its reducers READ the changed byte.
      assertEquals(expected, new TreeMap<>(sums.collectAsMap()), "answer after the stage rerun");
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      String mapId = data.getFileName().toString().split("_")[2];
      if (local) {
        List<String> changed = fetchFailures.messages().stream().filter(m -> m.contains("local shuffle block")).toList();
        assertFalse(changed.isEmpty(), "no fetch failure named a changed local block; fetch failures: " + fetchFailures.messages());
        String first = changed.get(0);
        assertTrue(first.contains("does not match the CRC32C taken when its map output was registered")
            && first.contains(" is corrupted due to DISK_ISSUE"), first);
        return;
      }
      List<String> corrupt = fetchFailures.messages().stream().filter(m -> m.contains("corrupt READ")).toList();
      assertFalse(corrupt.isEmpty(), "no fetch failure named a corrupt READ of " + data + " (byte " + at
          + " was " + before + "); fetch failures: " + fetchFailures.messages());
      String first = corrupt.get(0);
      assertTrue(first.contains("corrupt READ of block shuffle_" + shuffleId + "_") && first.contains("of region ")
          && first.contains("the owner published") && first.contains(" from "), first);
      assertTrue(first.contains("shuffle_" + shuffleId + "_" + mapId + "_"), "names another map output than "
          + data.getFileName() + ": " + first);
      // Spark's own diagnosis: the map task's checksum file says the bytes on disk changed.
      assertTrue(first.contains("Block shuffle_" + shuffleId + "_" + mapId + "_")
          && first.contains(" is corrupted due to DISK_ISSUE"), first);

      Map<String, Long> paths = bytesReadByPath(sc);
      String other = path.equals("shm") ? "tcp" : "shm";
      assertTrue(paths.getOrDefault(path, 0L) > 0 && !paths.containsKey(other), "data paths: " + paths);
      ExecutorRegions.awaitOnlyMapOutputs(sc);
    }
  }

  /** The partition offsets of a data file, from its index file (in the same block-manager folder). */
  private static long[] partitionOffsets(Path data) throws IOException {
    String name = data.getFileName().toString().replace(".data", ".index");
    Path index;
    try (Stream<Path> walk = Files.walk(data.getParent().getParent(), 2)) {
      index = walk.filter(p -> p.getFileName().toString().equals(name)).findFirst()
          .orElseThrow(() -> new IOException("no " + name + " beside " + data));
    }
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(index));
    long[] offsets = new long[b.remaining() / 8];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = b.getLong();
    }
    return offsets;
  }

  /** The non-empty committed data files of a shuffle on this host's executors, in name order. */
  private static List<Path> dataFiles(JavaSparkContext sc, int shuffleId) {
    List<String> dirs = sc.parallelize(IntStream.range(0, 16).boxed().toList(), 16)
        .flatMap(i -> Arrays.stream(SparkEnv.get().blockManager().diskBlockManager().localDirs())
            .map(File::getAbsolutePath).iterator())
        .distinct().collect();
    String prefix = "shuffle_" + shuffleId + "_";
    List<Path> files = dirs.stream().flatMap(d -> {
      try (Stream<Path> walk = Files.walk(Path.of(d))) {
        return walk.filter(p -> p.getFileName().toString().startsWith(prefix) && p.toString().endsWith(".data"))
            .filter(p -> p.toFile().length() > 0).toList().stream();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }).sorted().toList();
    assertFalse(files.isEmpty(), "no data file of shuffle " + shuffleId + " below " + dirs);
    return files;
  }

  /**
   * Inverts the byte at {@code at} of a file that executors have mapped read-only, and checks that
   * a read-only mapping made before the write sees it, as the transport's registration does.
   * Returns the byte as it was.
   */
  private static byte flipByte(Path file, long at) throws IOException {
    try (FileChannel read = FileChannel.open(file, StandardOpenOption.READ);
        FileChannel write = FileChannel.open(file, StandardOpenOption.WRITE)) {
      MappedByteBuffer mapped = read.map(FileChannel.MapMode.READ_ONLY, 0, read.size());
      byte before = mapped.get((int) at);
      assertEquals(1, write.write(ByteBuffer.wrap(new byte[] {(byte) ~before}), at));
      assertNotEquals(before, mapped.get((int) at), "a read-only mapping of " + file + " does not see the write");
      return before;
    }
  }

  private static Map<String, Long> bytesReadByPath(JavaSparkContext sc) {
    Map<String, Long> total = new TreeMap<>();
    for (TransportReport r : TransportReports.collect(sc)) {
      r.bytesReadByPath().forEach((p, n) -> total.merge(p, n, Long::sum));
    }
    return total;
  }
}
