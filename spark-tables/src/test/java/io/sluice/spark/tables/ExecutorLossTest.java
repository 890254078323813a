package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.TableReader;
import io.sluice.transport.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An executor killed under published tables: a table reports the shards it lost by name (the
 * catalog, the data source, a reader of the dead server all fail, none hangs), and a table
 * published with republishLost is whole again on the executors left.
 */
class ExecutorLossTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TableClusters.start(TableClusters.conf("tables-loss-test").setMaster("local-cluster[3,1,768]")
        .set("spark.executor.memory", "512m"), 3);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void lostShardsAreReportedByNameAndRepublishedWhereAsked() throws Exception {
    long rows = 6_000;
    PublishedTable fragile = SluiceTables.publish(spark.range(0, rows, 1, 6).toDF(), "fragile",
        Map.of("batchRows", "500"));
    PublishedTable healing = SluiceTables.publish(spark.range(0, rows, 1, 6).toDF(), "healing",
        Map.of("batchRows", "500", "republishLost", "true"));
    String victim = fragile.shards().get(0).executorId();
    assertTrue(healing.shards().stream().anyMatch(s -> s.executorId().equals(victim)),
        "both tables have shards on executor " + victim + ": " + healing.shards());
    TableShard doomed = fragile.shards().get(0);
    assertTrue(spark.sparkContext().killExecutor(victim), "executor " + victim + " killed");

    PublishedTable reported = Eventually.matches("the table reports the shards it lost", Duration.ofSeconds(60),
        () -> SluiceTables.table(spark, "fragile").orElseThrow(), t -> !t.lost().isEmpty());
    assertTrue(reported.lost().containsKey(doomed.flight()), reported.lost().toString());
    assertTrue(reported.lost().get(doomed.flight()).contains("executor " + victim), reported.lost().toString());
    String secret = SluiceTables.secret(spark);
    FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> TableClusters.read(fragile.uri(),
        "fragile", TableClusters.readerConfig(secret, true), TableClusters::tsv));
    assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code());
    assertTrue(e.getMessage().contains("lost") && e.getMessage().contains(doomed.flight()), e.getMessage());
    Exception read = assertThrows(Exception.class, () -> spark.read().format("sluice").load("fragile").count());
    assertTrue(String.valueOf(read.getMessage()).contains("lost"), String.valueOf(read.getMessage()));

    // A reader holding the dead executor's endpoint gets an error, within the calls' deadlines.
    assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
      try (BufferAllocator allocator = new RootAllocator();
           SluiceFlightClient c = SluiceFlightClient.connect(allocator, new Location(doomed.location()),
               TableClusters.readerConfig(secret, true))) {
        assertThrows(RuntimeException.class, () -> {
          try (TableReader r = c.getStream(SluiceFlightServer.ticket(doomed.flight()))) {
            while (r.next()) {
              // a dead server sends nothing
            }
          }
        });
      }
    });

    PublishedTable healed = Eventually.matches("the table with republishLost is whole again", Duration.ofSeconds(120),
        () -> SluiceTables.table(spark, "healing").orElseThrow(), t -> t.lost().isEmpty() && t.rows() == rows);
    assertFalse(healed.shards().stream().anyMatch(s -> s.executorId().equals(victim)), healed.shards().toString());
    List<String> ids = TableClusters.read(healed.uri(), "healing", TableClusters.readerConfig(secret, true),
        TableClusters::tsv).rows();
    assertEquals(rows, ids.size());
    assertEquals(rows, ids.stream().distinct().count());
    SluiceTables.unpublish(spark, "fragile");
    SluiceTables.unpublish(spark, "healing");
  }
}
