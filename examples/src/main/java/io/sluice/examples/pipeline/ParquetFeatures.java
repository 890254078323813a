package io.sluice.examples.pipeline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The feature table as Parquet files: the hand-off people run today (Spark writes files, the
 * trainer reads them back every epoch), the baseline of the main job. The rows are the ones the
 * executors publish over Flight ({@link FeaturePublisher}): user_id, label, f0..f(width-1) as
 * float64 and the history's {@link HistoryEmbedding} as {@code embedding}, an array of
 * {@value HistoryEmbedding#DIMS} float32 (Parquet has no fixed-size list; readers reshape it).
 *
 * <p>Written with Spark's own Parquet writer and its defaults (snappy), except the row-group
 * size: {@value #ROW_GROUP_BYTES} bytes, as Petastorm's Spark converter sets it, so a reader has
 * row groups to shuffle. Stateless.
 */
public final class ParquetFeatures {
  /** The row-group size Petastorm's converter writes with (32 MiB; Spark's default is 128 MiB). */
  public static final int ROW_GROUP_BYTES = 32 << 20;

  private ParquetFeatures() {}

  /** The Spark schema of the written table, in the column order of {@link FeaturePublisher#schema}. */
  public static StructType schema(int width) {
    List<StructField> fields = new ArrayList<>();
    fields.add(DataTypes.createStructField("user_id", DataTypes.LongType, false));
    fields.add(DataTypes.createStructField("label", DataTypes.DoubleType, false));
    for (int i = 0; i < width; i++) {
      fields.add(DataTypes.createStructField("f" + i, DataTypes.DoubleType, false));
    }
    fields.add(DataTypes.createStructField("embedding", DataTypes.createArrayType(DataTypes.FloatType, false), false));
    return DataTypes.createStructType(fields);
  }

  /**
   * Writes {@code features} ({@link Features#transform}'s columns) to {@code dir}, which must not
   * exist; returns the bytes of the Parquet files written.
   */
  public static long write(Dataset<Row> features, int width, long items, Path dir) {
    features.mapPartitions(new Embed(width, items), Encoders.row(schema(width)))
        .write()
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

  /** A task body: the scaled vector split into columns, the history embedded. Serializable, immutable. */
  record Embed(int width, long items) implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<Row> call(Iterator<Row> rows) {
      HistoryEmbedding embedding = HistoryEmbedding.forItems(items);
      int[] acc = new int[HistoryEmbedding.DIMS];
      return new Iterator<>() {
        private long[] history = new long[64];

        @Override
        public boolean hasNext() {
          return rows.hasNext();
        }

        @Override
        public Row next() {
          Row r = rows.next();
          Object[] values = new Object[width + 3];
          values[0] = r.getLong(0);
          values[1] = r.getDouble(1);
          Vector v = r.getAs(2);
          for (int i = 0; i < width; i++) {
            values[i + 2] = v.apply(i);
          }
          List<Object> seen = r.getList(3);
          if (seen.size() > history.length) {
            history = new long[Math.max(seen.size(), 2 * history.length)];
          }
          for (int h = 0; h < seen.size(); h++) {
            history[h] = ((Number) seen.get(h)).longValue();
          }
          float[] out = new float[HistoryEmbedding.DIMS]; // the row keeps it
          embedding.embed(history, seen.size(), acc, out);
          values[width + 2] = out;
          return RowFactory.create(values);
        }
      };
    }
  }
}
