package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * With spark.authenticate=true the transport authenticates with Spark's application secret. Local
 * reads and shared memory are off, so every block crosses the transport's tcp data path.
 */
class AuthenticatedShuffleTest extends ComparisonSupport {
  @Override
  String name() {
    return "auth";
  }

  @Override
  SparkConf configure(SparkConf conf) {
    // Own blocks are READ through the transport too (a connection to itself).
    return conf.set("spark.authenticate", "true").set("spark.authenticate.secret", "sluice-test-secret")
        .set(RdmaShuffleOption.LOCAL_READS.key(), "false")
        .set("spark.shuffle.rdma.transport.shm.enabled", "false");
  }

  @Override
  List<Job> jobs() {
    return List.of(
        new Job("reduceByKey", RddShuffleTest::reduceByKey),
        new Job("join", RddShuffleTest::join));
  }

  @Test
  void readsWentThroughTheTransport() throws Exception {
    RddShuffleTest.groupByKey(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
    Map<String, Long> paths = bytesReadByPath();
    assertTrue(paths.getOrDefault("tcp", 0L) > 0 && !paths.containsKey("shm"), "data paths: " + paths);
  }
}
