package org.apache.spark.shuffle.rdma;

import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * The same RDD shuffles with Kryo and shuffle compression off (which also exercises Spark's
 * serialized-sort writer), and with tiny READ limits.
 */
class KryoUncompressedShuffleTest extends ComparisonSupport {
  @Override
  String name() {
    return "rdd-kryo";
  }

  @Override
  SparkConf configure(SparkConf conf) {
    return conf.set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .set("spark.shuffle.compress", "false")
        .set("spark.shuffle.spill.compress", "false")
        // Tiny limits: ranges split at block boundaries, READs split into chunks, one range in flight.
        .set(RdmaShuffleOption.MAX_RANGE_BYTES.key(), "4k")
        .set(RdmaShuffleOption.READ_CHUNK_BYTES.key(), "64k")
        .set(RdmaShuffleOption.MAX_BYTES_IN_FLIGHT.key(), "8k");
  }

  @Override
  List<Job> jobs() {
    return List.of(
        new Job("reduceByKey", RddShuffleTest::reduceByKey),
        new Job("groupByKey", RddShuffleTest::groupByKey),
        new Job("sortByKey", RddShuffleTest::sortByKey),
        new Job("join", RddShuffleTest::join),
        new Job("repartition of 1 row", sc -> sc.parallelize(List.of(42), 3).repartition(5).collect()),
        new Job("records over 16 MiB", RddShuffleTest::bigRecords));
  }

  @Test
  void readsWentThroughTheTransport() throws Exception {
    RddShuffleTest.join(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
  }
}
