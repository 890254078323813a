package io.sluice.spark.tables;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * One published table (or one about to be written) as Spark's data source sees it: read in
 * columnar batches straight from the Arrow batches the executors serve, one input partition per
 * source partition, preferring the executor that holds it; written by publishing each task's rows
 * from its own executor, listed when the write commits.
 */
final class SluiceTable implements SupportsRead, SupportsWrite {
  private final String name;
  private final StructType schema;
  private final Map<String, String> properties;
  private final Optional<PublishedTable> published;

  SluiceTable(PublishedTable published) {
    this.name = published.name();
    this.schema = published.sparkSchema();
    this.properties = Map.of();
    this.published = Optional.of(published);
  }

  SluiceTable(String name, StructType schema, Map<String, String> properties) {
    this.name = name;
    this.schema = schema;
    this.properties = Map.copyOf(properties);
    this.published = Optional.empty();
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  @SuppressWarnings("deprecation")
  public StructType schema() {
    return schema;
  }

  @Override
  public Map<String, String> properties() {
    return properties;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return () -> new TableScan(name, schema);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    // The write's own options; the table's properties are Spark's (owner, provider) and not ours.
    Map<String, String> options = new LinkedHashMap<>(info.options().asCaseSensitiveMap());
    return new TableWriteBuilder(name, info.schema(), options);
  }

  /** Reads the table as the catalog holds it when the query is planned. */
  private static final class TableScan implements Scan, Batch {
    private final String name;
    private final StructType schema;

    TableScan(String name, StructType schema) {
      this.name = name;
      this.schema = schema;
    }

    @Override
    public StructType readSchema() {
      return schema;
    }

    @Override
    public String description() {
      return "sluice table " + name;
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      PublishedTable t = SluiceTables.table(SparkSession.active(), name)
          .orElseThrow(() -> new TableException("no table named '" + name + "' is published"));
      if (!t.lost().isEmpty()) {
        throw new TableException.LostShardsException(DriverCatalog.lostMessage(t, false));
      }
      Map<String, List<TableShard>> bySource = new LinkedHashMap<>();
      for (TableShard s : t.shards()) {
        bySource.computeIfAbsent(s.partition() + " " + s.location(), k -> new ArrayList<>()).add(s);
      }
      List<InputPartition> parts = new ArrayList<>();
      for (List<TableShard> shards : bySource.values()) {
        parts.add(new ShardReaderFactory.Partition(shards.get(0).location(),
            shards.stream().map(TableShard::flight).toList()));
      }
      return parts.toArray(InputPartition[]::new);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      return DriverCatalog.of(SparkSession.active().sparkContext()).readerFactory();
    }
  }

  /** Publishing by the data source's writer: truncate (mode overwrite) replaces a table of the name. */
  private static final class TableWriteBuilder implements WriteBuilder, SupportsTruncate {
    private final String name;
    private final StructType schema;
    private final Map<String, String> options;
    private boolean replace;

    TableWriteBuilder(String name, StructType schema, Map<String, String> options) {
      this.name = name;
      this.schema = schema;
      this.options = options;
    }

    @Override
    public WriteBuilder truncate() {
      replace = true;
      return this;
    }

    @Override
    public Write build() {
      boolean replace = this.replace;
      return new Write() {
        @Override
        public BatchWrite toBatch() {
          SparkSession spark = SparkSession.active();
          if (!replace && SluiceTables.table(spark, name).isPresent()) {
            throw new TableException("published tables do not take appends: write with mode(\"overwrite\") to"
                + " replace '" + name + "', or publish under a new name");
          }
          Map<String, String> tableOptions = new HashMap<>(options);
          tableOptions.keySet().removeIf(k -> k.equalsIgnoreCase("mode"));
          return new TableBatchWrite(DriverCatalog.of(spark.sparkContext()).begin(name, schema,
              TableOptions.parse(tableOptions)), replace);
        }
      };
    }
  }

  private static final class TableBatchWrite implements BatchWrite {
    private final DriverCatalog.Pending pending;
    private final boolean replace;

    TableBatchWrite(DriverCatalog.Pending pending, boolean replace) {
      this.pending = pending;
      this.replace = replace;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new ShardWriterFactory(pending.settings, pending.sparkSchema(), pending.timeZone());
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
      List<ShardWriter.Result> results = new ArrayList<>();
      for (WriterCommitMessage m : messages) {
        results.add(((ShardWriterFactory.Committed) m).result());
      }
      DriverCatalog.of(SparkSession.active().sparkContext()).commit(pending, results, replace);
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
      DriverCatalog.of(SparkSession.active().sparkContext()).abort(pending);
    }
  }
}
