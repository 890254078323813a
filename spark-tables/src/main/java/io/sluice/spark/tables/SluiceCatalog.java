package io.sluice.spark.tables;

import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The published tables as a Spark catalog (one namespace level: none): list, load, create by
 * writing ({@code CREATE TABLE sluice.t AS SELECT ...}, or the data source's save), drop (which
 * unpublishes). Tables cannot be altered or renamed: publish again.
 */
public final class SluiceCatalog implements TableCatalog {
  private String name = SluiceSource.CATALOG;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Identifier[] listTables(String[] namespace) {
    if (namespace.length > 0) {
      return new Identifier[0];
    }
    return SluiceTables.list(SparkSession.active()).stream().map(t -> Identifier.of(new String[0], t.name()))
        .toArray(Identifier[]::new);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (ident.namespace().length > 0) {
      throw new NoSuchTableException(ident);
    }
    return SluiceTables.table(SparkSession.active(), ident.name()).map(SluiceTable::new)
        .orElseThrow(() -> new NoSuchTableException(ident));
  }

  static SluiceTable load(String table) {
    return SluiceTables.table(SparkSession.active(), table).map(SluiceTable::new)
        .orElseThrow(() -> new TableException("no table named '" + table + "' is published"));
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException {
    if (ident.namespace().length > 0) {
      throw new IllegalArgumentException("published tables have no namespace: " + ident);
    }
    if (partitions.length > 0) {
      throw new IllegalArgumentException("published tables are not partitioned by columns (their shards are the"
          + " DataFrame's partitions)");
    }
    DriverCatalog.checkName(ident.name());
    if (SluiceTables.table(SparkSession.active(), ident.name()).isPresent()) {
      throw new TableAlreadyExistsException(ident);
    }
    return new SluiceTable(ident.name(), schema, properties);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException("published tables cannot be altered; publish the table again");
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return ident.namespace().length == 0 && SluiceTables.unpublish(SparkSession.active(), ident.name());
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw new UnsupportedOperationException("published tables cannot be renamed; publish the table again");
  }
}
