package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/**
 * With spark.network.crypto.enabled=true the transport encrypts every tcp frame (AES-GCM, keys
 * from the handshake with Spark's secret). Local reads and shared memory are off, so every block
 * crosses the encrypted tcp data path; the answers must match Spark's own shuffle.
 */
class EncryptedShuffleTest extends ComparisonSupport {
  @Override
  String name() {
    return "crypto";
  }

  @Override
  SparkConf configure(SparkConf conf) {
    return conf.set("spark.authenticate", "true").set("spark.authenticate.secret", "sluice-test-secret")
        .set("spark.network.crypto.enabled", "true")
        .set(RdmaShuffleOption.LOCAL_READS.key(), "false")
        .set("spark.shuffle.rdma.transport.shm.enabled", "false");
  }

  @Override
  List<Job> jobs() {
    return List.of(new Job("reduceByKey", RddShuffleTest::reduceByKey));
  }

  @Test
  void readsWentThroughTheEncryptedTransport() throws Exception {
    RddShuffleTest.groupByKey(sc);
    assertTransportsActive();
    assertRemoteBytesMoved();
    Map<String, Long> paths = bytesReadByPath();
    assertTrue(paths.getOrDefault("tcp", 0L) > 0 && !paths.containsKey("shm"), "data paths: " + paths);
  }
}
