package org.apache.spark.shuffle.rdma;

import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** The same RDD shuffles with Kryo and shuffle compression off (also exercises Spark's serialized-sort writer). */
class KryoUncompressedShuffleTest extends ComparisonSupport {
  @Override
  String name() {
    return "rdd-kryo";
  }

  @Override
  SparkConf configure(SparkConf conf) {
    return conf.set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .set("spark.shuffle.compress", "false")
        .set("spark.shuffle.spill.compress", "false");
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
