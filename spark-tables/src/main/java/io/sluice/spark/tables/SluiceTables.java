package io.sluice.spark.tables;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * DataFrames served from the executors' memory over Flight, by name.
 *
 * <pre>{@code
 * PublishedTable t = SluiceTables.publish(features, "features");
 * // any Flight client: GetFlightInfo(path ["features"]) at t.uri(), then DoGet each endpoint
 * SluiceTables.unpublish(spark, "features");
 * }</pre>
 *
 * <p>{@link #publish} runs one job: each partition becomes Arrow record batches (Spark's own
 * conversion) held in its executor's registered memory and served by that executor's Flight
 * server, with Sluice's READ data plane beside gRPC. The driver's catalog ({@link
 * PublishedTable#uri()}) lists the table with one endpoint per batch. A table lives until
 * {@link #unpublish}, its time-to-live or the application's end. Calls to the catalog and the
 * executors present call tokens of the tables' secret: Spark's own with {@code spark.authenticate},
 * else one the driver makes for the application ({@link #secret}).
 *
 * <p>Thread safe; call from the driver.
 */
public final class SluiceTables {
  private SluiceTables() {}

  /** Publishes {@code df} as {@code name} with the default options. */
  public static PublishedTable publish(Dataset<Row> df, String name) {
    return publish(df, name, Map.of());
  }

  /**
   * Publishes {@code df} as {@code name}; returns once every partition is served.
   *
   * @param options {@link TableOptions}' keys: batchRows, ttl, republishLost, mode
   * @throws IllegalArgumentException for an invalid name or option
   * @throws TableException if a table has the name already, a column has no Arrow type, the table
   *     does not fit in an executor's budget ({@link TableException.TableMemoryException}), or the
   *     job fails; nothing of the table stays published then
   */
  public static PublishedTable publish(Dataset<Row> df, String name, Map<String, String> options) {
    TableOptions o = TableOptions.parse(options);
    return DriverCatalog.of(df.sparkSession().sparkContext()).publish(df, name, o);
  }

  /** Unpublishes {@code name}, freeing its memory on every executor; false if no such table is published. */
  public static boolean unpublish(SparkSession spark, String name) {
    return DriverCatalog.existing(spark.sparkContext()).map(c -> c.unpublish(name)).orElse(false);
  }

  /** The published tables, by name. */
  public static List<PublishedTable> list(SparkSession spark) {
    return DriverCatalog.existing(spark.sparkContext()).map(DriverCatalog::list).orElse(List.of());
  }

  /** The table published as {@code name}, as the catalog holds it now. */
  public static Optional<PublishedTable> table(SparkSession spark, String name) {
    return DriverCatalog.existing(spark.sparkContext()).flatMap(c -> c.table(name));
  }

  /** The catalog's Flight location (started if it was not). */
  public static String catalogUri(SparkSession spark) {
    return DriverCatalog.of(spark.sparkContext()).uri();
  }

  /**
   * The tables' secret: what readers use for the READ data plane and to mint call tokens. Hand it
   * to a trainer as a secret (an environment variable, a secret store), never in a file others
   * read, a URI or a log line.
   */
  public static String secret(SparkSession spark) {
    return DriverCatalog.of(spark.sparkContext()).secret();
  }

  /**
   * The tables' secret of application {@code applicationId} where Spark authenticates with {@code
   * sparkSecret} (what {@link #secret} is there): HMAC-SHA256 keyed with Spark's secret over the
   * label {@code sluice/tables secret}, a zero byte and the application id, in lowercase hex. A
   * trainer that holds Spark's secret and learns the application id (not a secret) derives it.
   */
  public static String tablesSecret(String sparkSecret, String applicationId) {
    return TablesSecret.derive(sparkSecret, applicationId);
  }

  /**
   * A call token for the catalog, valid for {@code validity}: what a plain Flight client (pyarrow)
   * presents as {@code Authorization: Bearer <token>}. Each endpoint of the catalog's FlightInfo
   * carries, as app metadata, the token for its executor.
   */
  public static String catalogToken(SparkSession spark, Duration validity) {
    return DriverCatalog.of(spark.sparkContext()).token(validity);
  }

  /** What every executor server holds of published tables now (asks each one). */
  public static List<ExecutorMemory> memory(SparkSession spark) {
    return DriverCatalog.existing(spark.sparkContext()).map(DriverCatalog::memory).orElse(List.of());
  }
}
