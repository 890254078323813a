package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.SluiceFlightClient;
import io.sluice.transport.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * publish, read by name, unpublish on a real local-cluster with Spark's authentication on: the
 * executors serve the table, the catalog lists it, any Flight client reads it whole, and the
 * memory comes back.
 */
class SluiceTablesTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TableClusters.start(TableClusters.conf("tables-test")
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", java.util.HexFormat.of().formatHex(new java.security.SecureRandom().generateSeed(24)))
        .set("spark.sluice.tables.memory", "48m"), 2);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  /** Rows of every kind: scalars, strings, decimals, timestamps, arrays, structs, maps and nulls. */
  private static Dataset<Row> mixed(long rows, int partitions) {
    return spark.range(0, rows, 1, partitions).selectExpr(
        "id",
        "cast(id as double) * 0.5 as half",
        "concat('s', cast(id as string)) as name",
        "cast(id as decimal(12, 2)) as price",
        "array(cast(id % 3 as int), cast(id % 5 as int)) as small",
        "named_struct('a', cast(id as int), 'b', concat('b', cast(id as string))) as pair",
        "map('k', id) as kv",
        "if(id % 7 = 0, null, cast(id as int)) as maybe");
  }

  private static List<String> expected(long rows) {
    List<String> l = new ArrayList<>();
    for (long id = 0; id < rows; id++) {
      l.add(id + "\t" + (id * 0.5) + "\ts" + id);
    }
    Collections.sort(l);
    return l;
  }

  /** The first three columns of each row, sorted. */
  private static List<String> firstThree(TableClusters.Read r) {
    List<String> l = new ArrayList<>();
    for (String row : r.rows()) {
      String[] f = row.split("\t");
      l.add(f[0] + "\t" + f[1] + "\t" + f[2]);
    }
    Collections.sort(l);
    return l;
  }

  @Test
  void aPublishedTableIsReadWholeByNameOverTheDataPlaneAndOverGrpc() throws Exception {
    long rows = 20_000;
    PublishedTable t = SluiceTables.publish(mixed(rows, 4), "mixed", Map.of("batchRows", "3000"));
    try {
      assertEquals(rows, t.rows());
      assertEquals(2, t.endpoints().size(), "both executors serve it: " + t);
      assertEquals(8, t.shards().size(), "4 partitions of 5,000 rows in batches of 3,000: " + t.shards());
      assertTrue(t.lost().isEmpty());
      assertTrue(SluiceTables.list(spark).stream().anyMatch(p -> p.name().equals("mixed")));
      String secret = SluiceTables.secret(spark);
      TableClusters.Read plane = TableClusters.read(t.uri(), "mixed", TableClusters.readerConfig(secret, true),
          TableClusters::tsv);
      assertEquals(expected(rows), firstThree(plane));
      assertTrue(plane.paths().stream().allMatch(p -> p.equals("shm") || p.equals("tcp")),
          "the bodies came over the READ data plane: " + plane.paths());
      TableClusters.Read grpc = TableClusters.read(t.uri(), "mixed", TableClusters.readerConfig(secret, false),
          TableClusters::tsv);
      assertEquals(plane.rows().stream().sorted().toList(), grpc.rows().stream().sorted().toList());
      assertTrue(grpc.paths().stream().allMatch("grpc"::equals));
      String some = plane.rows().stream().filter(r -> r.startsWith("14\t")).findFirst().orElseThrow();
      assertEquals("14\t7.0\ts14\t14.00\t[2,4]\t{\"a\":14,\"b\":\"b14\"}\t[{\"key\":\"k\",\"value\":14}]\tnull", some);
    } finally {
      assertTrue(SluiceTables.unpublish(spark, "mixed"));
    }
    assertFalse(SluiceTables.table(spark, "mixed").isPresent());
    Eventually.matches("every executor freed the table's memory", Duration.ofSeconds(30),
        () -> SluiceTables.memory(spark), l -> l.size() == 2 && l.stream().allMatch(m -> m.bytes() == 0 && m.shards() == 0));
  }

  @Test
  void aNameIsPublishedOnceUnlessOverwritten() {
    SluiceTables.publish(spark.range(10).toDF(), "once");
    try {
      TableException e = assertThrows(TableException.class, () -> SluiceTables.publish(spark.range(5).toDF(), "once"));
      assertTrue(e.getMessage().contains("'once' is published already"), e.getMessage());
      PublishedTable again = SluiceTables.publish(spark.range(5).toDF(), "once", Map.of("mode", "overwrite"));
      assertEquals(5, again.rows());
    } finally {
      SluiceTables.unpublish(spark, "once");
    }
  }

  @Test
  void invalidNamesAndOptionsFailBeforeAnyTask() {
    assertThrows(IllegalArgumentException.class, () -> SluiceTables.publish(spark.range(1).toDF(), "no/slash"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SluiceTables.publish(spark.range(1).toDF(), "t", Map.of("batchRows", "0")));
    assertTrue(e.getMessage().contains("batchRows"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> SluiceTables.publish(spark.range(1).toDF(), "t", Map.of("rows", "1")));
    assertTrue(e.getMessage().contains("unknown table option 'rows'"), e.getMessage());
  }

  @Test
  void aTableOverTheBudgetFailsNamingTheBudgetAndLeavesNothingBehind() {
    // 4 million doubles and longs: 64 MB, over two executors' 48 MB budgets only with luck; one partition: surely.
    Dataset<Row> big = spark.range(0, 4_000_000, 1, 1).selectExpr("id", "cast(id as double) as d");
    TableException e = assertThrows(TableException.TableMemoryException.class,
        () -> SluiceTables.publish(big, "big"));
    assertTrue(e.getMessage().contains("spark.sluice.tables.memory = 48m"), e.getMessage());
    assertTrue(e.getMessage().contains("table 'big'"), e.getMessage());
    assertFalse(SluiceTables.table(spark, "big").isPresent());
    for (ExecutorMemory m : SluiceTables.memory(spark)) {
      assertEquals(0, m.bytes(), "a failed publish holds nothing: " + m);
    }
    // One batch larger than the budget fails while it is built, before anything is registered.
    e = assertThrows(TableException.TableMemoryException.class,
        () -> SluiceTables.publish(big, "big", Map.of("batchRows", "4000000")));
    assertTrue(e.getMessage().contains("building a record batch"), e.getMessage());
    assertFalse(SluiceTables.table(spark, "big").isPresent());
  }

  @Test
  void theCatalogRefusesCallsWithoutAValidToken() throws Exception {
    PublishedTable t = SluiceTables.publish(spark.range(100).toDF(), "guarded");
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightClient wrong = SluiceFlightClient.connect(allocator, new Location(t.uri()),
          TableClusters.readerConfig("a wrong secret of enough bytes", false))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> wrong.flight()
            .getInfo(FlightDescriptor.path("guarded"), CallOptions.timeout(30, java.util.concurrent.TimeUnit.SECONDS)));
        assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code());
      }
      try (SluiceFlightClient right = SluiceFlightClient.connect(allocator, new Location(t.uri()),
          TableClusters.readerConfig(SluiceTables.secret(spark), false))) {
        // A name far beyond any table's is refused before it is looked up, and not echoed back.
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> right.flight()
            .getInfo(FlightDescriptor.path("x".repeat(20_000)), CallOptions.timeout(30, java.util.concurrent.TimeUnit.SECONDS)));
        assertEquals(FlightStatusCode.INVALID_ARGUMENT, e.status().code());
        assertFalse(e.getMessage().contains("xxxxxxxx"), "the name is not echoed");
      }
      // Tokens the catalog would refuse are not minted.
      assertThrows(IllegalArgumentException.class, () -> SluiceTables.catalogToken(spark, Duration.ofDays(30)));
      assertThrows(IllegalArgumentException.class, () -> SluiceTables.catalogToken(spark, Duration.ofSeconds(-60)));
      try (SluiceFlightClient none = SluiceFlightClient.connect(allocator, new Location(t.uri()))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> none.flight()
            .getInfo(FlightDescriptor.path("guarded"), CallOptions.timeout(30, java.util.concurrent.TimeUnit.SECONDS)));
        assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code());
      }
    } finally {
      SluiceTables.unpublish(spark, "guarded");
    }
  }

  @Test
  void aTableWithATimeToLiveIsUnpublishedWhenItEnds() {
    SluiceTables.publish(spark.range(100).toDF(), "brief", Map.of("ttl", "2s"));
    assertTrue(SluiceTables.table(spark, "brief").get().expires().isPresent());
    Eventually.holds("the table is gone after its time-to-live", Duration.ofSeconds(30),
        () -> SluiceTables.table(spark, "brief").isEmpty());
  }

  @Test
  void aColumnArrowCannotHoldIsNamed() {
    Dataset<Row> df = spark.range(3).selectExpr("id", "make_interval(0, 0, 0, cast(id as int)) as span");
    // Spark maps calendar intervals to Arrow's month-day-nano intervals on some lines; where it
    // cannot, the error names the column.
    try {
      SluiceTables.publish(df, "spans");
      SluiceTables.unpublish(spark, "spans");
    } catch (TableException.UnsupportedColumnException e) {
      assertTrue(e.getMessage().contains("column 'span'"), e.getMessage());
    }
  }

  @Test
  void theDataSourceWritesAndReadsPublishedTables() {
    Dataset<Row> df = mixed(5_000, 3).drop("kv"); // exceptAll compares rows; maps do not compare
    df.write().format("sluice").option("table", "written").option("batchRows", "1000").save();
    try {
      PublishedTable t = SluiceTables.table(spark, "written").orElseThrow();
      assertEquals(5_000, t.rows());
      assertEquals(6, t.shards().size(), "3 partitions of 1,666 or 1,667 rows in batches of 1,000: " + t.shards());
      Dataset<Row> back = spark.read().format("sluice").load("written");
      assertEquals(df.schema(), back.schema());
      assertEquals(0, back.exceptAll(df).count());
      assertEquals(0, df.exceptAll(back).count());
      assertEquals(5_000L, spark.sql("SELECT count(*) FROM sluice.written").first().getLong(0));
      Exception e = assertThrows(Exception.class,
          () -> df.write().format("sluice").option("table", "written").save());
      assertTrue(e.getMessage().contains("written"), e.getMessage());
      e = assertThrows(Exception.class,
          () -> df.write().format("sluice").mode("append").option("table", "written").save());
      assertTrue(String.valueOf(e.getMessage()).contains("appends"), String.valueOf(e.getMessage()));
      // Overwriting keeps the table's schema (Spark checks a write against the table it replaces).
      df.limit(7).write().format("sluice").mode("overwrite").save("written");
      assertEquals(7, SluiceTables.table(spark, "written").orElseThrow().rows());
      assertEquals(7, spark.read().format("sluice").load("written").count());
    } finally {
      SluiceTables.unpublish(spark, "written");
    }
  }

  @Test
  void aReaderTokenCannotDropTables() throws Exception {
    PublishedTable t = SluiceTables.publish(spark.range(1_000).toDF(), "kept");
    try (BufferAllocator allocator = new RootAllocator()) {
      String at = t.shards().get(0).location();
      // What the catalog hands a reader: a call token for that executor, not the secret.
      String token = io.sluice.flight.CallToken.key(SluiceTables.secret(spark))
          .mint(at, java.time.Instant.now().plusSeconds(60));
      try (org.apache.arrow.flight.FlightClient c = org.apache.arrow.flight.FlightClient.builder(allocator,
          new Location(at)).intercept(io.sluice.flight.CallToken.clientMiddleware(token)).build()) {
        for (byte[] body : List.of("kept@1".getBytes(java.nio.charset.StandardCharsets.UTF_8), new byte[40], new byte[0])) {
          FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> c.doAction(
              new org.apache.arrow.flight.Action(ExecutorTables.DROP, body)).forEachRemaining(r -> { }));
          assertEquals(FlightStatusCode.UNAUTHORIZED, e.status().code(), e.getMessage());
        }
      }
      assertEquals(1_000, TableClusters.read(t.uri(), "kept", TableClusters.readerConfig(SluiceTables.secret(spark),
          false), TableClusters::tsv).rows().size(), "the table is whole");
    } finally {
      SluiceTables.unpublish(spark, "kept");
    }
  }
}
