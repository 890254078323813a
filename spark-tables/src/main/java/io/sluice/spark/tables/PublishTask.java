package io.sluice.spark.tables;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.RDDBlockId;
import org.apache.spark.storage.StorageLevel;
import scala.collection.Iterator;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction2;

/**
 * The task body of {@code publish}: one partition's rows become shards on the task's executor
 * ({@link ShardWriter}), and the executor records a one-line block under the table's RDD id, so
 * that dynamic allocation keeps it while the table lives (Spark keeps executors holding cached
 * blocks; {@code unpublish} removes the blocks). Immutable, serializable.
 */
final class PublishTask extends AbstractFunction2<TaskContext, Iterator<InternalRow>, ShardWriter.Result>
    implements Serializable {
  private static final long serialVersionUID = 1L;
  private final TablesConf.TaskSettings settings;
  private final StructType schema;
  private final String timeZone;

  PublishTask(TablesConf.TaskSettings settings, StructType schema, String timeZone) {
    this.settings = settings;
    this.schema = schema;
    this.timeZone = timeZone;
  }

  @Override
  public ShardWriter.Result apply(TaskContext task, Iterator<InternalRow> rows) {
    try (ShardWriter w = new ShardWriter(settings, schema, ArrowSchemas.of(settings.name(), schema, timeZone),
        task.partitionId())) {
      while (rows.hasNext()) {
        w.write(rows.next());
      }
      List<TableShard> shards = w.commit();
      holdExecutor(settings, task.partitionId());
      return w.result(shards);
    } catch (IOException e) {
      throw new UncheckedIOException("publishing table '" + settings.name() + "'", e);
    }
  }

  /** The block that marks this executor as holding part of the table. */
  static void holdExecutor(TablesConf.TaskSettings settings, int partition) {
    SparkEnv.get().blockManager().putSingle(new RDDBlockId(settings.rddId(), partition),
        "sluice table " + settings.name(), StorageLevel.MEMORY_ONLY(), true, ClassTag$.MODULE$.apply(String.class));
  }

  @Override
  public String toString() {
    return "PublishTask[" + settings + "]";
  }
}
