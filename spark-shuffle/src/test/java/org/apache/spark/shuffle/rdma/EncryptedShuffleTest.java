package org.apache.spark.shuffle.rdma;

import java.util.List;
import java.util.Map;

/**
 * With spark.network.crypto.enabled=true the transport encrypts every tcp frame (AES-GCM, keys
 * from the handshake with Spark's secret). Local reads and shared memory are off, so every block
 * crosses the encrypted tcp data path; the answers must match Spark's own shuffle.
 */
class EncryptedShuffleTest extends AuthenticatedTcpComparison {
  EncryptedShuffleTest() {
    super("crypto", Map.of("spark.network.crypto.enabled", "true"),
        List.of(new Job("reduceByKey", RddJobs::reduceByKey)));
  }
}
