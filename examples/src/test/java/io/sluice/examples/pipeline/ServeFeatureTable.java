package io.sluice.examples.pipeline;

import io.sluice.spark.tables.PublishedTable;
import io.sluice.spark.tables.SluiceTables;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A test program for the Python trainer's tests and {@code examples/gpu/run}: publishes a
 * generated feature table (the pipeline's columns, rows drawn from fixed seeds, so two runs serve
 * the same rows) with {@link SluiceTables#publish} from a Spark session on {@code local-cluster}
 * (one executor JVM, Spark's jars from {@code SPARK_HOME}), one shard per partition, writes {@code RUN_DIR/driver.properties} as the pipeline's driver does (the
 * catalog's URI, the table's name, a catalog token; owner-only), prints {@code serving} and serves
 * until a line {@code stop} (or the end of stdin).
 *
 * <pre>SLUICE_SECRET=... SPARK_HOME=... java -cp ... io.sluice.examples.pipeline.ServeFeatureTable RUN_DIR SHARDS ROWS_PER_SHARD WIDTH</pre>
 *
 * <p>The secret comes from the environment only ({@value FeaturePipeline#SECRET_ENV}), as the
 * pipeline's driver takes it: Spark's authentication secret, and so the table's.
 */
public final class ServeFeatureTable {
  private ServeFeatureTable() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      throw new IllegalArgumentException("usage: RUN_DIR SHARDS ROWS_PER_SHARD WIDTH (the secret in "
          + FeaturePipeline.SECRET_ENV + ")");
    }
    Path dir = Path.of(args[0]);
    int shards = Integer.parseInt(args[1]);
    int rows = Integer.parseInt(args[2]);
    int width = Integer.parseInt(args[3]);
    String secret = System.getenv(FeaturePipeline.SECRET_ENV);
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("no " + FeaturePipeline.SECRET_ENV + " in the environment");
    }
    long rowBytes = 8L * (width + 2) + 4L * (HistoryEmbedding.DIMS + 1) + 16;
    String home = System.getenv("SPARK_HOME");
    if (home == null || home.isEmpty()) {
      throw new IllegalArgumentException("no SPARK_HOME (a folder with Spark's jars/) in the environment");
    }
    // local-cluster, not local: Spark keeps spark.authenticate.secret only off local mode (local
    // mode makes a secret of its own), and the executor is a JVM of its own, as the pipeline's are.
    // -Dspark.executor.memory and -Dspark.executor.extraJavaOptions override the small defaults.
    SparkConf conf = new SparkConf()
        .setMaster("local-cluster[1,2,4096]")
        .setAppName("serve-feature-table")
        .set("spark.home", home)
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", secret)
        .set("spark.sluice.tables.transport.bindHost", "127.0.0.1")
        .set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
        .setIfMissing("spark.executor.memory", "768m")
        .setIfMissing("spark.executor.extraJavaOptions", "--add-opens=java.base/java.nio=ALL-UNNAMED")
        // The whole table in the executor's registered memory, beside its heap.
        .set("spark.sluice.tables.memory", (2 * shards * rows * rowBytes / (1 << 20) + 64) + "m");
    SparkSession spark = SparkSession.builder().config(conf).getOrCreate();
    long deadline = System.nanoTime() + 180_000_000_000L;
    while (spark.sparkContext().getExecutorIds().isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the executor did not register within 180 s (its log: " + home + "/work)");
      }
      Thread.sleep(100);
    }
    Dataset<Row> table = spark.range(0, shards, 1, shards).as(Encoders.LONG())
        .mapPartitions(new Generate(rows, width), Encoders.row(schema(width)));
    PublishedTable t = SluiceTables.publish(table, FeaturePipeline.TABLE, Map.of("batchRows", Integer.toString(rows)));
    Properties p = new Properties();
    p.setProperty("catalog", t.uri());
    p.setProperty("table", t.name());
    p.setProperty("applicationId", spark.sparkContext().applicationId());
    p.setProperty("catalogToken", SluiceTables.catalogToken(spark, Duration.ofHours(24)));
    p.setProperty("rows", Long.toString(t.rows()));
    p.setProperty("features", Integer.toString(width));
    p.setProperty("shards", Integer.toString(t.shards().size()));
    p.setProperty("tableBytes", Long.toString(t.bytes()));
    p.setProperty("flightDataPlane", t.dataPlane());
    Files.createDirectories(dir);
    FeaturePipeline.writeOwnerOnly(dir.resolve("driver.properties"), p, "ServeFeatureTable");
    System.out.println("catalog " + t.uri());
    System.out.println("data-plane " + t.dataPlane());
    System.out.println("serving");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null && !line.equals("stop"); line = in.readLine()) {
      System.out.println("unknown command " + line);
    }
    spark.stop();
    System.exit(0);
  }

  /** The pipeline's columns: user_id, label, f0..f(width-1), embedding ({@link Features#table}). */
  static StructType schema(int width) {
    List<StructField> fields = new ArrayList<>();
    fields.add(DataTypes.createStructField("user_id", DataTypes.LongType, false));
    fields.add(DataTypes.createStructField("label", DataTypes.DoubleType, false));
    for (int i = 0; i < width; i++) {
      fields.add(DataTypes.createStructField("f" + i, DataTypes.DoubleType, false));
    }
    fields.add(DataTypes.createStructField("embedding", DataTypes.createArrayType(DataTypes.FloatType, false), false));
    return DataTypes.createStructType(fields);
  }

  /** Shard {@code s}'s rows from seed {@code 29 + s}: a label the first feature predicts, the rest noise. */
  record Generate(int rows, int width) implements MapPartitionsFunction<Long, Row> {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<Row> call(Iterator<Long> shardIds) {
      return new Iterator<>() {
        private long shard = -1;
        private int row = rows;
        private SplittableRandom random;

        @Override
        public boolean hasNext() {
          return row < rows || shardIds.hasNext();
        }

        @Override
        public Row next() {
          if (row == rows) {
            shard = shardIds.next();
            random = new SplittableRandom(29 + shard);
            row = 0;
          }
          Object[] values = new Object[width + 3];
          double signal = random.nextGaussian();
          values[0] = shard * rows + row++;
          values[1] = signal + 0.3 * random.nextGaussian() > 0 ? 1.0 : 0.0;
          for (int i = 0; i < width; i++) {
            values[i + 2] = i == 0 ? signal : random.nextGaussian();
          }
          float[] dense = new float[HistoryEmbedding.DIMS];
          for (int d = 0; d < dense.length; d++) {
            dense[d] = (float) random.nextGaussian();
          }
          values[width + 2] = dense;
          return RowFactory.create(values);
        }
      };
    }
  }
}
