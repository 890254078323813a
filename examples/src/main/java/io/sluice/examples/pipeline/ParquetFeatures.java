package io.sluice.examples.pipeline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The feature table as Parquet files: the hand-off people run today (Spark writes files, the
 * trainer reads them back every epoch), the baseline of the main job. The rows and columns are the
 * ones the pipeline publishes ({@link Features#table}: user_id, label, f0..f(width-1) as float64,
 * {@code embedding} as an {@code array<float>} of {@value HistoryEmbedding#DIMS}).
 *
 * <p>Written with Spark's own Parquet writer and its defaults (snappy), except the row-group
 * size: {@value #ROW_GROUP_BYTES} bytes, as Petastorm's Spark converter sets it, so a reader has
 * row groups to shuffle. Stateless.
 */
public final class ParquetFeatures {
  /** The row-group size Petastorm's converter writes with (32 MiB; Spark's default is 128 MiB). */
  public static final int ROW_GROUP_BYTES = 32 << 20;

  private ParquetFeatures() {}

  /** Writes {@code table} ({@link Features#table}) to {@code dir}, which must not exist; returns the bytes of the Parquet files written. */
  public static long write(Dataset<Row> table, Path dir) {
    table.write()
        .option("parquet.block.size", Integer.toString(ROW_GROUP_BYTES))
        .parquet(dir.toString());
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".parquet")).mapToLong(f -> {
        try {
          return Files.size(f);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }).sum();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the Parquet files in " + dir, e);
    }
  }
}
