package io.sluice.examples.pipeline;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Row;

/**
 * A task body that turns its partition of the feature table (user_id, label, scaled feature vector) into Arrow
 * batches and publishes them through its executor's Flight server ({@link ExecutorFlight}),
 * returning one line per partition: "executorId location dataPlane rows".
 *
 * <p>Serializable, immutable: the table name, the transport secret ({@code sluice.transport.secret}
 * of the executors' Flight servers; empty serves plain Flight only) and the feature width travel
 * with the task. Each call runs on one task thread.
 *
 * @param table the name the partitions are published under
 * @param secret the executors' transport secret, or empty
 * @param width the number of features per row
 */
record FeaturePublisher(String table, String secret, int width) implements FlatMapFunction<Iterator<Row>, String> {
  private static final long serialVersionUID = 1L;
  static final int BATCH_ROWS = 8192;

  /** The Arrow schema of the feature table: user_id int64, label and f0..f(width-1) float64. */
  static Schema schema(int width) {
    ArrowType f64 = new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    List<Field> fields = new ArrayList<>();
    fields.add(Field.notNullable("user_id", new ArrowType.Int(64, true)));
    fields.add(Field.notNullable("label", f64));
    for (int i = 0; i < width; i++) {
      fields.add(Field.notNullable("f" + i, f64));
    }
    return new Schema(fields);
  }

  @Override
  public Iterator<String> call(Iterator<Row> rows) throws Exception {
    String host = SparkEnv.get().blockManager().blockManagerId().host();
    ExecutorFlight flight = ExecutorFlight.get(host, secret);
    Schema schema = schema(width);
    List<VectorSchemaRoot> roots = new ArrayList<>();
    long count = 0;
    try {
      while (rows.hasNext()) {
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, flight.allocator());
        roots.add(root);
        count += fill(root, rows);
      }
      flight.add(table, schema, roots);
    } catch (Exception | Error e) {
      roots.forEach(VectorSchemaRoot::close);
      throw e;
    }
    return List.of(SparkEnv.get().executorId() + " " + flight.location() + " " + flight.dataPlane() + " " + count
        + " " + TaskContext.getPartitionId()).iterator();
  }

  /** Moves up to {@link #BATCH_ROWS} rows into {@code root}; returns how many. */
  private int fill(VectorSchemaRoot root, Iterator<Row> rows) {
    root.allocateNew();
    BigIntVector user = (BigIntVector) root.getVector(0);
    Float8Vector label = (Float8Vector) root.getVector(1);
    Float8Vector[] features = new Float8Vector[width];
    for (int i = 0; i < width; i++) {
      features[i] = (Float8Vector) root.getVector(i + 2);
    }
    int n = 0;
    while (n < BATCH_ROWS && rows.hasNext()) {
      Row r = rows.next();
      user.setSafe(n, r.getLong(0));
      label.setSafe(n, r.getDouble(1));
      Vector v = r.getAs(2);
      for (int i = 0; i < width; i++) {
        features[i].setSafe(n, v.apply(i));
      }
      n++;
    }
    root.setRowCount(n);
    return n;
  }
}
