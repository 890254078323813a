package io.sluice.examples.pipeline;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Row;

/**
 * A task body that turns its partition of the feature table (user_id, label, scaled feature
 * vector, history) into Arrow batches of {@link #BATCH_ROWS} rows with the history embedded as a
 * dense block ({@link HistoryEmbedding}), and publishes each batch as one shard of the table
 * through its executor's Flight server ({@link ExecutorFlight}): shard names are
 * {@code TABLE.pPPPPP-bBBBBB} (partition, batch), which is what a trainer's loader lists. Returns
 * one line per partition: "executorId location dataPlane rows partition shards bodyBytes".
 *
 * <p>Serializable, immutable: the table name, the transport secret ({@code sluice.transport.secret}
 * of the executors' Flight servers; empty serves plain Flight only), the feature width and the
 * item count travel with the task. Each call runs on one task thread.
 *
 * @param table the name the shards' names start with
 * @param secret the executors' transport secret, or empty
 * @param width the number of scaled features per row
 * @param items how many items the raw events have (the embedding table's size)
 */
record FeaturePublisher(String table, String secret, int width, long items)
    implements FlatMapFunction<Iterator<Row>, String> {
  private static final long serialVersionUID = 1L;
  static final int BATCH_ROWS = 8192;

  /** Without the secret: Spark logs the functions it ships. */
  @Override
  public String toString() {
    return "FeaturePublisher[table=" + table + ", secret=<hidden>, width=" + width + ", items=" + items + "]";
  }

  /**
   * The Arrow schema of the feature table: user_id int64, label and f0..f(width-1) float64, and
   * {@code embedding}, a FixedSizeList of {@link HistoryEmbedding#DIMS} float32.
   */
  public static Schema schema(int width) {
    ArrowType f64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    List<Field> fields = new ArrayList<>();
    fields.add(Field.notNullable("user_id", new ArrowType.Int(64, true)));
    fields.add(Field.notNullable("label", f64));
    for (int i = 0; i < width; i++) {
      fields.add(Field.notNullable("f" + i, f64));
    }
    fields.add(new Field("embedding", FieldType.notNullable(new ArrowType.FixedSizeList(HistoryEmbedding.DIMS)),
        List.of(Field.notNullable("value", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)))));
    return new Schema(fields);
  }

  /** The name of batch {@code batch} of partition {@code partition}. */
  static String shardName(String table, int partition, int batch) {
    return String.format("%s.p%05d-b%05d", table, partition, batch);
  }

  @Override
  public Iterator<String> call(Iterator<Row> rows) throws Exception {
    String host = SparkEnv.get().blockManager().blockManagerId().host();
    ExecutorFlight flight = ExecutorFlight.get(host, secret);
    Schema schema = schema(width);
    HistoryEmbedding embedding = HistoryEmbedding.forItems(items);
    int partition = TaskContext.getPartitionId();
    long count = 0;
    long bytes = 0;
    int batches = 0;
    while (rows.hasNext()) {
      VectorSchemaRoot root = VectorSchemaRoot.create(schema, flight.allocator());
      try {
        count += fill(root, rows, embedding);
        for (var v : root.getFieldVectors()) {
          bytes += v.getBufferSize();
        }
        flight.publish(shardName(table, partition, batches++), schema, root);
      } finally {
        root.close(); // the published table holds its own references
      }
    }
    return List.of(SparkEnv.get().executorId() + " " + flight.location() + " " + flight.dataPlane() + " " + count
        + " " + partition + " " + batches + " " + bytes).iterator();
  }

  /** Moves up to {@link #BATCH_ROWS} rows into {@code root}; returns how many. */
  private int fill(VectorSchemaRoot root, Iterator<Row> rows, HistoryEmbedding embedding) {
    root.allocateNew();
    BigIntVector user = (BigIntVector) root.getVector(0);
    Float8Vector label = (Float8Vector) root.getVector(1);
    Float8Vector[] features = new Float8Vector[width];
    for (int i = 0; i < width; i++) {
      features[i] = (Float8Vector) root.getVector(i + 2);
    }
    FixedSizeListVector dense = (FixedSizeListVector) root.getVector(width + 2);
    Float4Vector values = (Float4Vector) dense.getDataVector();
    int[] acc = new int[HistoryEmbedding.DIMS];
    float[] out = new float[HistoryEmbedding.DIMS];
    long[] history = new long[64];
    int n = 0;
    while (n < BATCH_ROWS && rows.hasNext()) {
      Row r = rows.next();
      user.setSafe(n, r.getLong(0));
      label.setSafe(n, r.getDouble(1));
      Vector v = r.getAs(2);
      for (int i = 0; i < width; i++) {
        features[i].setSafe(n, v.apply(i));
      }
      List<Object> seen = r.getList(3);
      if (seen.size() > history.length) {
        history = new long[Math.max(seen.size(), 2 * history.length)];
      }
      for (int h = 0; h < seen.size(); h++) {
        history[h] = ((Number) seen.get(h)).longValue();
      }
      embedding.embed(history, seen.size(), acc, out);
      int at = dense.startNewValue(n);
      for (int d = 0; d < out.length; d++) {
        values.setSafe(at + d, out[d]);
      }
      n++;
    }
    root.setRowCount(n);
    return n;
  }
}
