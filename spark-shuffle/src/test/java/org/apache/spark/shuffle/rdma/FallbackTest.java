package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * When the transport cannot start on the executors (here: a provider this machine does not
 * have), RdmaShuffleManager behaves as Spark's sort shuffle and the job still succeeds.
 */
class FallbackTest {
  @Test
  void unavailableTransportFallsBackToSortShuffle() throws Exception {
    SparkConf conf = PrometheusScrape.enable(LocalCluster.conf("fallback", true))
        .set("spark.shuffle.rdma.transport.provider", "verbs");
    try (JavaSparkContext sc = LocalCluster.start(conf)) {
      ShuffleMetricsListener metrics = new ShuffleMetricsListener();
      sc.sc().addSparkListener(metrics);
      Map<Integer, Long> got = new TreeMap<>(sc.parallelize(SharedJobs.range(20_000), 4)
          .mapToPair(i -> new Tuple2<>(i % 97, (long) i)).reduceByKey(Long::sum, 5).collectAsMap());
      Map<Integer, Long> expected = new TreeMap<>();
      SharedJobs.range(20_000).forEach(i -> expected.merge(i % 97, (long) i, Long::sum));
      assertEquals(expected, got);
      List<String> transports = ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).registeredTransports();
      assertEquals(List.of(), transports, "no executor should have a transport");
      sc.sc().listenerBus().waitUntilEmpty(10_000);
      assertTrue(metrics.snapshot().records() > 0, "Spark's reader counted no records");
      // Each executor's fallback, counted by its reason, reaches the driver's Prometheus servlet. An
      // executor's reporter starts before its open fails, so its first reports may come before the
      // fallback was counted: wait until every executor that reports has counted it.
      Map<String, Long> scraped = PrometheusScrape.scrapeUntil(sc, "every reporting executor's fallback",
          v -> v.getOrDefault("fallback_executor_transportStartFailed", 0L) >= 1
              && v.get("fallback_executor_transportStartFailed").equals(v.get("executors_reporting"))
              && v.getOrDefault("fallback_shuffle_noTransport", 0L) >= 1);
      // Executors decide on their first shuffle task: each one that ran one counted its fallback.
      assertTrue(scraped.get("fallback_executor_transportStartFailed") >= 1, scraped.toString());
      assertEquals(scraped.get("executors_reporting"), scraped.get("fallback_executor_transportStartFailed"));
      assertTrue(scraped.get("fallback_shuffle_noTransport") >= 1, scraped.toString());
      assertEquals(0, scraped.get("decisions_executor_transport"));
      assertEquals(0, scraped.get("reads_tcp_bytes") + scraped.get("reads_shm_bytes") + scraped.get("reads_verbs_bytes"));
    }
  }
}
