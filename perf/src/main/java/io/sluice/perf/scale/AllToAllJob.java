package io.sluice.perf.scale;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.apache.spark.HashPartitioner;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * The shuffle the scale benchmark runs: {@code maps} map tasks each write {@code rowsPerBlock}
 * rows of {@code valueBytes} random bytes to every one of {@code reducers} reduce partitions
 * (key {@code r + reducers * j} lands in partition r under Spark's {@link HashPartitioner}), so
 * every reducer reads a block from every map output: all to all, whatever the data. Each reduce
 * task checks that its rows belong to it and counts them. Stateless.
 */
final class AllToAllJob {
  private AllToAllJob() {}

  /** The job's shape; positive numbers. */
  record Shape(int maps, int reducers, int rowsPerBlock, int valueBytes) {
    Shape {
      if (maps <= 0 || reducers <= 0 || rowsPerBlock <= 0 || valueBytes <= 0) {
        throw new IllegalArgumentException("maps, reducers, rows per block and value bytes must be positive: " + this);
      }
    }

    long rows() {
      return (long) maps * reducers * rowsPerBlock;
    }
  }

  /**
   * Runs the job once.
   *
   * @throws IllegalStateException if a reducer got rows of another partition or the wrong number
   */
  static void run(JavaSparkContext sc, Shape shape, long seed) {
    int reducers = shape.reducers();
    int rows = shape.rowsPerBlock();
    int bytes = shape.valueBytes();
    List<long[]> counts = sc.parallelize(IntStream.range(0, shape.maps()).boxed().toList(), shape.maps())
        .flatMapToPair(m -> rowsOf(m, reducers, rows, bytes, seed))
        .partitionBy(new HashPartitioner(reducers))
        .mapPartitionsWithIndex((p, it) -> List.of(count(p, reducers, it)).iterator(), true)
        .collect();
    long expected = (long) shape.maps() * rows;
    for (long[] c : counts) {
      if (c[1] != 0 || c[2] != expected) {
        throw new IllegalStateException("reduce partition " + c[0] + " got " + c[2] + " rows (expected " + expected
            + "), " + c[1] + " of them for another partition");
      }
    }
    if (counts.size() != reducers) {
      throw new IllegalStateException(counts.size() + " reduce partitions answered, expected " + reducers);
    }
  }

  private static Iterator<Tuple2<Integer, byte[]>> rowsOf(int map, int reducers, int rowsPerBlock, int valueBytes,
      long seed) {
    SplittableRandom random = new SplittableRandom(seed * 1_000_003L + map);
    List<Tuple2<Integer, byte[]>> out = new ArrayList<>(reducers * rowsPerBlock);
    for (int j = 0; j < rowsPerBlock; j++) {
      for (int r = 0; r < reducers; r++) {
        byte[] value = new byte[valueBytes];
        random.nextBytes(value);
        out.add(new Tuple2<>(r + reducers * (map * rowsPerBlock + j), value));
      }
    }
    return out.iterator();
  }

  /** {partition, rows of other partitions, rows}. */
  private static long[] count(int partition, int reducers, Iterator<Tuple2<Integer, byte[]>> rows) {
    long wrong = 0;
    long n = 0;
    while (rows.hasNext()) {
      if (Math.floorMod(rows.next()._1(), reducers) != partition) {
        wrong++;
      }
      n++;
    }
    return new long[] {partition, wrong, n};
  }
}
