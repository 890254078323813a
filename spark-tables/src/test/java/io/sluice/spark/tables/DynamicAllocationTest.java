package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Dynamic allocation keeps the executors that hold a published table, as it keeps executors with
 * cached data, and idles them out once the table is unpublished.
 */
class DynamicAllocationTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = SparkSession.builder().config(TableClusters.conf("tables-dynamic-allocation-test")
        .set("spark.dynamicAllocation.enabled", "true")
        .set("spark.dynamicAllocation.shuffleTracking.enabled", "true")
        .set("spark.dynamicAllocation.minExecutors", "0")
        .set("spark.dynamicAllocation.initialExecutors", "2")
        .set("spark.dynamicAllocation.maxExecutors", "2")
        .set("spark.dynamicAllocation.executorIdleTimeout", "2s")).getOrCreate();
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  private static Set<String> executors() {
    return CollectionConverters.asJava(spark.sparkContext().getExecutorIds()).stream().collect(Collectors.toSet());
  }

  @Test
  void executorsHoldingATableAreKeptUntilItIsUnpublished() throws InterruptedException {
    PublishedTable t = SluiceTables.publish(spark.range(0, 10_000, 1, 4).toDF(), "kept");
    Set<String> holders = t.shards().stream().map(TableShard::executorId).collect(Collectors.toSet());
    // Five idle timeouts: executors without a table would be gone by now.
    Thread.sleep(10_000);
    assertTrue(executors().containsAll(holders), "holders " + holders + " still registered: " + executors());
    SluiceTables.unpublish(spark, "kept");
    Eventually.holds("the executors idle out once the table is unpublished", Duration.ofSeconds(90),
        () -> executors().stream().noneMatch(holders::contains));
  }
}
