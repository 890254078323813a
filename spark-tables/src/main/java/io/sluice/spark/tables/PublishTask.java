package io.sluice.spark.tables;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction2;

/**
 * The task body of {@code publish}: one partition's rows become shards on the task's executor
 * ({@link ShardWriter}). Immutable, serializable.
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
    try (ShardWriter w = new ShardWriter(settings, schema, timeZone, task.partitionId())) {
      while (rows.hasNext()) {
        w.write(rows.next());
      }
      return w.commit();
    } catch (IOException e) {
      throw new UncheckedIOException("publishing table '" + settings.name() + "'", e);
    }
  }

  @Override
  public String toString() {
    return "PublishTask[" + settings + "]";
  }
}
