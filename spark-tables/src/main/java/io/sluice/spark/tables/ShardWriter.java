package io.sluice.spark.tables;

import io.sluice.flight.table.FlightTable;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import scala.reflect.ClassTag$;

/**
 * One task's part of a table: its partition's rows into Arrow record batches of at most {@code
 * batchRows} rows (Spark's own Arrow conversion, every type it supports, nested ones included),
 * each published as one shard through the executor's server ({@link ExecutorTables}). A task that
 * fails removes what it published. Not thread safe: one task thread.
 */
final class ShardWriter implements AutoCloseable {
  private final TablesConf.TaskSettings settings;
  private final ExecutorTables tables;
  private final Schema schema;
  private final int partition;
  private final int attempt;
  private final List<String> flights = new ArrayList<>();
  private final List<TableShard> shards = new ArrayList<>();
  private VectorSchemaRoot root;
  private ArrowWriter writer;
  private int rows;
  private boolean done;

  /** The writer of partition {@code partition}'s rows of {@code schema}, timestamps in {@code timeZone}. */
  ShardWriter(TablesConf.TaskSettings settings, StructType schema, String timeZone, int partition)
      throws IOException {
    this.settings = settings;
    this.schema = ArrowSchemas.of(settings.name(), schema, timeZone);
    this.partition = partition;
    TaskContext task = TaskContext.get();
    this.attempt = task == null ? 0 : task.attemptNumber();
    this.tables = ExecutorTables.get(TablesSecret.onExecutor(settings.shippedSecret()), settings.transportKeys());
  }

  void write(InternalRow row) throws IOException {
    try {
      if (root == null) {
        root = VectorSchemaRoot.create(schema, tables.allocator());
        writer = ArrowWriter.create(root);
        rows = 0;
      }
      writer.write(row);
    } catch (org.apache.arrow.memory.OutOfMemoryException e) {
      throw tables.buildingOverBudget(settings.name(), e);
    }
    if (++rows == settings.batchRows()) {
      flush();
    }
  }

  private void flush() throws IOException {
    if (root == null) {
      return;
    }
    try {
      writer.finish();
      String flight = String.format("%s/r%d/p%05d-a%d-b%05d", settings.tableKey(), settings.round(), partition, attempt,
          shards.size());
      long bytes;
      try (FlightTable.Builder b = FlightTable.builder(schema, new DictionaryProvider.MapDictionaryProvider())) {
        b.add(root);
        FlightTable t = b.build();
        bytes = t.bodyBytes();
        flights.add(flight);
        tables.publish(settings.tableKey(), settings.name(), flight, t);
      }
      shards.add(new TableShard(flight, partition, shards.size(), SparkEnv.get().executorId(), tables.location(),
          rows, bytes));
    } finally {
      root.close();
      root = null;
      writer = null;
    }
  }

  /**
   * Publishes the last batch and records a one-line block under the table's RDD id, so that
   * dynamic allocation keeps this executor while the table lives (Spark keeps executors holding
   * cached blocks; unpublishing removes the blocks). Returns what the task published.
   */
  Result commit() throws IOException {
    flush();
    done = true;
    SparkEnv.get().blockManager().putSingle(new RDDBlockId(settings.rddId(), partition),
        "sluice table " + settings.name(), StorageLevel.MEMORY_ONLY(), true, ClassTag$.MODULE$.apply(String.class));
    return new Result(partition, SparkEnv.get().executorId(), tables.location(), tables.dataPlane(),
        List.copyOf(shards));
  }

  /** Removes what this task published (a failed or aborted attempt). */
  void abort() {
    done = true;
    tables.removeAll(settings.tableKey(), flights);
    flights.clear();
  }

  @Override
  public void close() {
    if (root != null) {
      root.close();
      root = null;
    }
    if (!done) {
      abort();
    }
  }

  /** The result of one publishing task, sent to the driver. */
  record Result(int partition, String executorId, String location, String dataPlane, List<TableShard> shards)
      implements Serializable {}

}
