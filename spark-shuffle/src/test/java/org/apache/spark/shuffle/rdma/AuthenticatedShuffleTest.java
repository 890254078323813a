package org.apache.spark.shuffle.rdma;

import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** With spark.authenticate=true the transport authenticates with Spark's application secret. */
class AuthenticatedShuffleTest extends ComparisonSupport {
  @Override
  String name() {
    return "auth";
  }

  @Override
  SparkConf configure(SparkConf conf) {
    return conf.set("spark.authenticate", "true").set("spark.authenticate.secret", "sluice-test-secret");
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
  }
}
