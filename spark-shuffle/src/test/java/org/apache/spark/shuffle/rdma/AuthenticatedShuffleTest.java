package org.apache.spark.shuffle.rdma;

import java.util.List;
import java.util.Map;

/**
 * With spark.authenticate=true the transport authenticates with Spark's application secret. Local
 * reads and shared memory are off, so every block crosses the transport's tcp data path.
 */
class AuthenticatedShuffleTest extends AuthenticatedTcpComparison {
  AuthenticatedShuffleTest() {
    super("auth", Map.of(), List.of(
        new Job("reduceByKey", RddJobs::reduceByKey),
        new Job("join", RddJobs::join)));
  }
}
