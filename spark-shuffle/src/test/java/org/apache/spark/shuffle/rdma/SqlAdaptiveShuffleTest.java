package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * SQL with adaptive query execution: partition coalescing, a skew join split on a skewed key and
 * the local shuffle reader all read shuffle output through map-index and partition ranges. Each
 * query's rows must match Spark's default shuffle, and its final plan must show that AQE really
 * used the feature.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqlAdaptiveShuffleTest {
  /** A query and the text its final adaptive plan must contain. */
  record Query(String name, String planMarker, Function<SparkSession, Dataset<Row>> build) {}

  private final Map<String, List<String>> baseline = new LinkedHashMap<>();
  private SparkSession spark;

  static List<Query> queries() {
    return List.of(
        new Query("coalesced aggregation", "coalesced", s ->
            s.range(0, 50_000, 1, 4).selectExpr("id % 13 AS k", "id AS v").groupBy("k").sum("v")),
        new Query("skew join", "skew=true", s -> {
          // Key 0 holds most rows of the left side, so its partition is split by map ranges. The
          // global aggregate after the join needs no hash partitioning, so AQE may split.
          Dataset<Row> left = s.range(0, 60_000, 1, 4)
              .selectExpr("CASE WHEN id % 10 < 8 THEN 0 ELSE id % 200 END AS k", "id AS a");
          Dataset<Row> right = s.range(0, 400, 1, 2).selectExpr("id % 200 AS k", "id AS b");
          return left.join(right, "k").selectExpr("count(*) AS n", "sum(a) AS sa", "sum(b) AS sb");
        }),
        new Query("local shuffle reader", "local", s -> {
          s.conf().set("spark.sql.autoBroadcastJoinThreshold", "1m");
          // Statically both sides look large; at run time the filtered side is small, so AQE
          // switches to a broadcast join and reads the other side with the local shuffle reader.
          Dataset<Row> big = s.range(0, 400_000, 1, 4).selectExpr("id % 5000 AS k", "id AS a");
          Dataset<Row> small = s.range(0, 400_000, 1, 4).where("id % 97 = 3").selectExpr("id % 5000 AS k", "id AS b");
          return big.join(small, "k").selectExpr("count(*) AS n", "sum(a) AS sa", "sum(b) AS sb");
        }));
  }

  private static SparkSession session(SparkConf conf) {
    SparkSession s = SparkSession.builder().config(SharedJobs.adaptive(conf, 40)).getOrCreate();
    LocalCluster.awaitExecutors(new org.apache.spark.api.java.JavaSparkContext(s.sparkContext()),
        LocalCluster.EXECUTORS, 120);
    return s;
  }

  private static List<String> run(SparkSession s, Query q, boolean checkPlan) {
    s.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    Dataset<Row> df = q.build().apply(s);
    List<String> rows = new ArrayList<>();
    for (Row r : df.collectAsList()) {
      rows.add(r.toString());
    }
    Collections.sort(rows);
    if (checkPlan) {
      String plan = df.queryExecution().executedPlan().toString();
      assertTrue(plan.contains(q.planMarker()), q.name() + ": final plan lacks '" + q.planMarker() + "':\n" + plan);
    }
    return rows;
  }

  @BeforeAll
  void baselineThenRdma() {
    SparkSession sort = session(LocalCluster.conf("sql-sort", false));
    try {
      for (Query q : queries()) {
        baseline.put(q.name(), run(sort, q, false));
      }
    } finally {
      sort.stop();
    }
    spark = session(LocalCluster.conf("sql-rdma", true));
  }

  @AfterAll
  void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @TestFactory
  Stream<DynamicTest> sameRowsAsSortShuffle() {
    return queries().stream().map(q -> DynamicTest.dynamicTest(q.name(), () -> {
      long before = blocksInRuns();
      assertEquals(baseline.get(q.name()), run(spark, q, true), q.name());
      if (q.name().equals("coalesced aggregation")) {
        // Its reducers read ranges of partitions, which Spark's reader fetches in batch: so do they,
        // one stream per run of a map output's blocks (lz4 and UnsafeRow's streams concatenate).
        assertTrue(blocksInRuns() > before, "no blocks were read in runs");
      }
    }));
  }

  private long blocksInRuns() {
    return TransportReports.collect(new org.apache.spark.api.java.JavaSparkContext(spark.sparkContext())).stream()
        .mapToLong(io.sluice.spark.shuffle.TransportReport::blocksInRuns).sum();
  }
}
