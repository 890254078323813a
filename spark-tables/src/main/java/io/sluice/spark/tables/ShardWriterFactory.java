package io.sluice.spark.tables;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;

/** The data source's writers: each task publishes its rows as {@code publish} does. Serializable, immutable. */
final class ShardWriterFactory implements DataWriterFactory {
  private static final long serialVersionUID = 1L;
  private final TablesConf.TaskSettings settings;
  private final StructType schema;
  private final String timeZone;

  ShardWriterFactory(TablesConf.TaskSettings settings, StructType schema, String timeZone) {
    this.settings = settings;
    this.schema = schema;
    this.timeZone = timeZone;
  }

  /** One task's shards, for the driver's commit. */
  record Committed(ShardWriter.Result result) implements WriterCommitMessage {}

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    ShardWriter w;
    try {
      w = new ShardWriter(settings, schema, timeZone, partitionId);
    } catch (IOException e) {
      throw new UncheckedIOException("publishing table '" + settings.name() + "'", e);
    }
    return new DataWriter<>() {
      @Override
      public void write(InternalRow row) throws IOException {
        w.write(row);
      }

      @Override
      public WriterCommitMessage commit() throws IOException {
        return new Committed(w.commit());
      }

      @Override
      public void abort() {
        w.abort();
      }

      @Override
      public void close() {
        w.close();
      }
    };
  }
}
