package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.api.java.JavaPairRDD;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The same RDD shuffles with Kryo and shuffle compression off (which also exercises Spark's
 * serialized-sort writer), with tiny READ limits and small registration windows.
 */
class KryoUncompressedShuffleTest extends ComparisonSupport {
  KryoUncompressedShuffleTest() {
    super("rdd-kryo", Map.of(
        "spark.serializer", "org.apache.spark.serializer.KryoSerializer",
        "spark.shuffle.compress", "false",
        "spark.shuffle.spill.compress", "false",
        // Tiny limits: ranges split at block boundaries, READs split into chunks, one range in flight.
        RdmaShuffleOption.MAX_RANGE_BYTES.key(), "4k",
        RdmaShuffleOption.READ_CHUNK_BYTES.key(), "64k",
        RdmaShuffleOption.MAX_BYTES_IN_FLIGHT.key(), "8k",
        // Data files of more than 256 KiB (the big records) are registered as several windows.
        RdmaShuffleOption.REGISTRATION_WINDOW_BYTES.key(), "256k"), jobs());
  }

  private static List<Job> jobs() {
    List<Job> jobs = new ArrayList<>(RddJobs.keyedShuffles());
    jobs.add(RddJobs.repartitionOfOneRow());
    jobs.add(new Job("records over 16 MiB", RddJobs::bigRecords));
    return jobs;
  }

  @Test
  void readsWentThroughTheTransport() throws Exception {
    RddJobs.join(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
  }

  @Test
  void mapOutputsLargerThanAWindowAreRegisteredInWindows() throws Exception {
    // Three map outputs of about 17 MiB: some 68 windows of 256 KiB each.
    JavaPairRDD<Integer, byte[]> shuffled = sc.parallelize(List.of(1, 2, 3), 3).mapToPair(seed -> {
      byte[] b = new byte[17 * 1024 * 1024];
      Arrays.fill(b, (byte) seed.intValue());
      return new Tuple2<>(seed, b);
    }).partitionBy(new HashPartitioner(2));
    List<Integer> lengths = shuffled.map(kv -> kv._2()[kv._2().length - 1] == kv._1() ? kv._2().length : -1)
        .collect();
    assertEquals(List.of(17 << 20, 17 << 20, 17 << 20), lengths, "records came back whole");
    int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();
    // Map outputs are on both executors: ask until both have answered.
    Map<String, Integer> byExecutor = Eventually.matches("every executor's registered windows", Eventually.DEADLINE,
        () -> ExecutorProbe.registeredWindows(sc, shuffleId), w -> w.size() == LocalCluster.EXECUTORS);
    long windows = byExecutor.values().stream().mapToLong(Integer::longValue).sum();
    assertTrue(windows > 3 * 60, "windows registered for three 17 MiB map outputs: " + byExecutor);
    assertRemoteBytesMoved();
  }
}
