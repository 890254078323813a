package io.sluice.spark.tables;

import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsCatalogOptions;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code sluice} data source: published tables through Spark's reader and writer.
 *
 * <pre>{@code
 * df.write().format("sluice").option("table", "features").save();      // publish (fails if published)
 * df.write().format("sluice").mode("overwrite").save("features");      // publish again under the name
 * spark.read().format("sluice").load("features");                      // read it back, batch by batch
 * }</pre>
 *
 * <p>The table is named by the {@code table} option or the path; the other options are {@link
 * TableOptions}' ({@code batchRows}, {@code ttl}). Tables go through the {@value #CATALOG} catalog
 * ({@link SluiceCatalog}), which the source registers in the session when it is not configured, so
 * SQL reaches them too: {@code SELECT * FROM sluice.features}.
 */
public final class SluiceSource implements SupportsCatalogOptions, DataSourceRegister {
  /** The catalog name the source's tables live under. */
  public static final String CATALOG = "sluice";

  @Override
  public String shortName() {
    return "sluice";
  }

  @Override
  public Identifier extractIdentifier(CaseInsensitiveStringMap options) {
    return Identifier.of(new String[0], nameOf(options));
  }

  @Override
  public String extractCatalog(CaseInsensitiveStringMap options) {
    String key = "spark.sql.catalog." + CATALOG;
    SparkSession spark = SparkSession.active();
    if (!spark.conf().contains(key)) {
      spark.conf().set(key, SluiceCatalog.class.getName());
    }
    return CATALOG;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return SluiceCatalog.load(nameOf(options)).schema();
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    String name = nameOf(new CaseInsensitiveStringMap(properties));
    return SluiceTables.table(SparkSession.active(), name).map(SluiceTable::new)
        .orElseGet(() -> new SluiceTable(name, schema, properties));
  }

  static String nameOf(CaseInsensitiveStringMap options) {
    String name = options.containsKey("table") ? options.get("table") : options.get("path");
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("the sluice data source names a table: .option(\"table\", NAME) or"
          + " .load(NAME) / .save(NAME)");
    }
    return name;
  }
}
