package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What every Spark line's jar must do, on that line's own Spark and Arrow jars (spark-tables-lines):
 * publish a DataFrame, read it back by name through the driver's catalog over the data plane and
 * through the "sluice" data source, and unpublish it, on one local-cluster with authentication on.
 */
class SparkLineTablesTest {
  private static SparkSession spark;

  @BeforeAll
  static void start() {
    spark = TableClusters.start(TableClusters.conf("tables-line-test")
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", HexFormat.of().formatHex(new SecureRandom().generateSeed(24))), 2);
  }

  @AfterAll
  static void stop() {
    if (spark != null) {
      spark.stop();
    }
  }

  @Test
  void theLineRunsOnItsOwnSparkAndArrow() {
    assertEquals(System.getProperty("sluice.test.sparkVersion"), spark.version());
    // flight-core is the jar's own; arrow-vector is Spark's. Both at the version that Spark ships.
    String arrow = System.getProperty("sluice.test.arrowVersion");
    assertEquals("flight-core-" + arrow + ".jar", jarOf(FlightClient.class));
    assertEquals("arrow-vector-" + arrow + ".jar", jarOf(VectorSchemaRoot.class));
  }

  @Test
  void aTableIsPublishedReadByNameAndUnpublished() throws Exception {
    long rows = 3_000;
    Dataset<Row> df = spark.range(0, rows, 1, 3).selectExpr(
        "id",
        "concat('s', cast(id as string)) as name",
        "array(cast(id % 3 as int)) as small",
        "named_struct('a', cast(id as int)) as pair",
        "if(id % 7 = 0, null, cast(id as double)) as maybe");
    PublishedTable t = SluiceTables.publish(df, "line", Map.of("batchRows", "500"));
    try {
      assertEquals(rows, t.rows());
      assertEquals(6, t.shards().size(), "3 partitions of 1,000 rows in batches of 500: " + t.shards());
      TableClusters.Read read = TableClusters.read(t.uri(), "line",
          TableClusters.readerConfig(SluiceTables.secret(spark), true), TableClusters::tsv);
      assertTrue(read.paths().stream().allMatch(p -> p.equals("shm") || p.equals("tcp")),
          "the bodies came over the READ data plane: " + read.paths());
      List<String> ids = new ArrayList<>();
      for (String row : read.rows()) {
        ids.add(row.substring(0, row.indexOf('\t')));
      }
      Collections.sort(ids);
      List<String> expected = new ArrayList<>();
      for (long id = 0; id < rows; id++) {
        expected.add(Long.toString(id));
      }
      Collections.sort(expected);
      assertEquals(expected, ids);
      assertTrue(read.rows().contains("14\ts14\t[2]\t{\"a\":14}\tnull"), "row 14 whole");

      Dataset<Row> back = spark.read().format("sluice").load("line");
      assertEquals(df.schema(), back.schema());
      assertEquals(0, back.exceptAll(df).count());
      assertEquals(0, df.exceptAll(back).count());
    } finally {
      assertTrue(SluiceTables.unpublish(spark, "line"));
    }
    assertFalse(SluiceTables.table(spark, "line").isPresent());
    Eventually.matches("every executor freed the table's memory", Duration.ofSeconds(30),
        () -> SluiceTables.memory(spark), l -> l.size() == 2 && l.stream().allMatch(m -> m.bytes() == 0 && m.shards() == 0));
  }

  private static String jarOf(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).getFileName().toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
