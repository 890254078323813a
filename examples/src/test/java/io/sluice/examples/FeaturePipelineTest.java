package io.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.examples.pipeline.FeaturePipeline;
import io.sluice.examples.pipeline.HistoryEmbedding;
import io.sluice.examples.trainer.CatalogTable;
import io.sluice.examples.trainer.Epoch;
import io.sluice.examples.trainer.PlainFlightReader;
import io.sluice.examples.trainer.TableDigest;
import io.sluice.examples.trainer.Trainer;
import io.sluice.flight.CallToken;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.flight.loader.Shard;
import io.sluice.spark.tables.PublishedTable;
import io.sluice.spark.tables.SluiceTables;
import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The pipeline at a tiny scale on a real local-cluster with Spark's authentication on, once with
 * RdmaShuffleManager and once with Spark's sort shuffle, each publishing the feature table with
 * {@code SluiceTables.publish}, and once writing it as Parquet: the feature rows are the same bit
 * for bit (sorted) whichever shuffle built them and whichever path carried them (READ over the
 * transport, gRPC from the same servers, flight-core's plain FlightClient with the catalog's
 * tokens, the Parquet files); a plain client without a token gets nothing; the trainer's loss goes
 * down epoch by epoch.
 */
class FeaturePipelineTest {
  static final long USERS = 3000;
  /** Spark's secret, as the harness hands it to the driver and the trainer. */
  static final String SECRET = HexFormat.of().formatHex(new SecureRandom().generateSeed(24));

  /** Rows read one way, sorted, each as user_id and the raw bits of every double. */
  record Read(String path, List<String> rows) {}

  @Test
  void sameFeaturesUnderBothShuffleManagersAndFlightPaths() throws Exception {
    List<Read> sluice = new ArrayList<>();
    List<Epoch> epochs = new ArrayList<>();
    TableDigest trained = new TableDigest();
    TableDigest plainReader = new TableDigest();
    runPipeline(true, (spark, table) -> {
      String tablesSecret = SluiceTables.secret(spark);
      assertEquals(tablesSecret, SluiceTables.tablesSecret(SECRET, spark.sparkContext().applicationId()),
          "a trainer derives the tables' secret from Spark's and the application id");
      CallOption catalogToken = CallToken.callOption(SluiceTables.catalogToken(spark, Duration.ofMinutes(5)));
      assertEquals(FlightStatusCode.UNAUTHENTICATED, assertThrows(FlightRuntimeException.class,
          () -> readWithPlainFlightClient(table, Optional.empty(), false)).status().code(),
          "the catalog answered a call without a token");
      assertEquals(FlightStatusCode.UNAUTHENTICATED, assertThrows(FlightRuntimeException.class,
          () -> readWithPlainFlightClient(table, Optional.of(catalogToken), false)).status().code(),
          "an executor answered a call without its token");
      sluice.add(readWithSluiceClient(table, tablesSecret, true));
      sluice.add(readWithSluiceClient(table, tablesSecret, false));
      sluice.add(readWithPlainFlightClient(table, Optional.of(catalogToken), true));
      PlainFlightReader.read(table, catalogToken, plainReader);
      epochs.addAll(Trainer.train(table, tablesSecret, new Trainer.Options(3, 0, 1, 1, 2, "127.0.0.1", true), trained,
          e -> { }));
    });
    List<Read> stock = new ArrayList<>();
    runPipeline(false, (spark, table) -> stock.add(readWithSluiceClient(table, SluiceTables.secret(spark), true)));
    List<String> parquet = new ArrayList<>();
    Path files = Files.createTempDirectory("pipeline-test-parquet").resolve("features");
    runSpark(false, Optional.of(files), (spark, result) -> {
      assertTrue(result.table().isEmpty(), "a Parquet run publishes nothing");
      assertEquals("parquet", result.measurements().getProperty("flightDataPlane"));
      parquet.addAll(render(spark.read().parquet(files.toString())));
    });

    assertTrue(Set.of("shm", "tcp").contains(sluice.get(0).path()), "data plane path " + sluice.get(0).path());
    assertEquals("grpc", sluice.get(1).path());
    List<String> expected = sluice.get(0).rows();
    assertEquals(USERS, expected.size());
    assertEquals(expected, sluice.get(1).rows(), "gRPC path of the same servers");
    assertEquals(expected, sluice.get(2).rows(), "flight-core FlightClient");
    assertEquals(expected, stock.get(0).rows(), "features built with Spark's sort shuffle");
    assertEquals(expected, parquet, "features Spark wrote as Parquet");
    assertEquals(USERS, plainReader.rows());
    assertEquals(trained.value(), plainReader.value(), "PlainFlightReader and the trainer saw different rows");

    assertEquals(3, epochs.size());
    assertTrue(epochs.get(1).loss() < epochs.get(0).loss() && epochs.get(2).loss() < epochs.get(1).loss(),
        "loss by epoch: " + epochs.stream().map(Epoch::loss).toList());
  }

  interface TableCheck {
    void accept(SparkSession spark, CatalogTable table) throws Exception;
  }

  interface RunCheck {
    void accept(SparkSession spark, FeaturePipeline.Result result) throws Exception;
  }

  /** Runs the pipeline on a fresh local-cluster and checks its table while the executors serve it. */
  static void runPipeline(boolean rdmaShuffle, TableCheck check) throws Exception {
    runSpark(rdmaShuffle, Optional.empty(), (spark, result) -> {
      PublishedTable table = result.table().orElseThrow();
      assertEquals(USERS, table.rows());
      assertEquals(FeaturePipeline.TABLE, table.name());
      assertEquals(2, table.endpoints().size(), "one endpoint per executor: " + table.endpoints());
      assertEquals(table.dataPlane(), result.measurements().getProperty("flightDataPlane"));
      check.accept(spark, new CatalogTable(table.uri(), table.name(), table.rows()));
    });
  }

  /** Runs the pipeline on a fresh local-cluster (published, or to Parquet files) and checks it while Spark runs. */
  static void runSpark(boolean rdmaShuffle, Optional<Path> parquet, RunCheck check) throws Exception {
    String home = System.getProperty("sluice.test.sparkHome");
    SparkConf conf = new SparkConf()
        .setMaster("local-cluster[2,1,1024]")
        .setAppName("feature-pipeline-test")
        .set("spark.home", home)
        .set("spark.executor.extraClassPath", System.getProperty("sluice.test.executorClassPath"))
        .set("spark.executor.extraJavaOptions", "--add-opens=java.base/java.nio=ALL-UNNAMED")
        .set("spark.executor.memory", "768m")
        .set("spark.ui.enabled", "false")
        .set("spark.driver.host", "127.0.0.1")
        .set("spark.driver.bindAddress", "127.0.0.1")
        .set("spark.authenticate", "true")
        .set("spark.authenticate.secret", SECRET)
        .set("spark.sluice.tables.transport.bindHost", "127.0.0.1")
        .set("spark.sql.shuffle.partitions", "6")
        .set("spark.sql.autoBroadcastJoinThreshold", "-1");
    if (rdmaShuffle) {
      conf.set("spark.shuffle.manager", "org.apache.spark.shuffle.rdma.RdmaShuffleManager");
    }
    Path dir = Files.createTempDirectory("pipeline-test");
    try (SparkSession spark = SparkSession.builder().config(conf).getOrCreate()) {
      FeaturePipeline.Options o = new FeaturePipeline.Options(dir, USERS, 40, 2, 60, parquet);
      awaitExecutors(spark, 2);
      check.accept(spark, FeaturePipeline.run(spark, o, line -> { }));
    }
  }

  static void awaitExecutors(SparkSession spark, int count) {
    Eventually.matches(count + " executors registered (logs of those that did not start: "
        + System.getProperty("sluice.test.sparkHome") + "/work)", Duration.ofSeconds(120),
        () -> spark.sparkContext().getExecutorIds().size(), n -> n >= count);
  }

  /** Every shard with Sluice's client and the tables' {@code secret}, over the data plane or gRPC. */
  static Read readWithSluiceClient(CatalogTable table, String secret, boolean dataPlane) throws InterruptedException {
    TransportConfig config = TransportConfig.of(Map.of("sluice.transport.bindHost", "127.0.0.1",
        "sluice.flight.dataPlane", Boolean.toString(dataPlane), "sluice.transport.secret", secret));
    List<String> rows = new ArrayList<>();
    Set<String> paths = new TreeSet<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Shard shard : table.list(allocator, table.tokenFrom(secret)).shards()) {
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, shard.location(), config);
             TableReader stream = client.getStream(shard.ticket())) {
          while (stream.next()) {
            render(stream.getRoot(), rows);
          }
          paths.add(stream.dataPath());
        }
      }
    }
    Collections.sort(rows);
    return new Read(String.join("+", paths), rows);
  }

  /**
   * Every shard with flight-core's own client: the catalog asked with {@code catalogToken} (none:
   * no token), each executor with the token the catalog handed out for it, or none.
   */
  static Read readWithPlainFlightClient(CatalogTable table, Optional<CallOption> catalogToken, boolean withTokens)
      throws Exception {
    List<String> rows = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      CatalogTable.Listing listing = table.list(allocator, catalogToken.orElse(CallOptions.timeout(30,
          TimeUnit.SECONDS)));
      for (Shard shard : listing.shards()) {
        String at = shard.location().getUri().toString();
        try (FlightClient client = FlightClient.builder(allocator, shard.location()).build();
             FlightStream stream = withTokens ? client.getStream(shard.ticket(), listing.auth(at))
                 : client.getStream(shard.ticket())) {
          while (stream.next()) {
            render(stream.getRoot(), rows);
          }
        }
      }
    }
    Collections.sort(rows);
    return new Read("flight-core", rows);
  }

  /** The rows of a Parquet table as {@link #render(VectorSchemaRoot, List)} renders them, sorted. */
  static List<String> render(Dataset<Row> parquet) {
    List<String> out = new ArrayList<>();
    for (Row r : parquet.collectAsList()) {
      StringBuilder s = new StringBuilder(String.format("%08d", r.getLong(0)));
      for (int c = 1; c < r.size() - 1; c++) {
        s.append(' ').append(Long.toHexString(Double.doubleToRawLongBits(r.getDouble(c))));
      }
      List<Float> dense = r.getList(r.size() - 1);
      assertEquals(HistoryEmbedding.DIMS, dense.size());
      for (float f : dense) {
        s.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(f)));
      }
      out.add(s.toString());
    }
    Collections.sort(out);
    return out;
  }

  /** Each row as user_id and the raw bits of every double and of every float of the dense block. */
  static void render(VectorSchemaRoot batch, List<String> out) {
    int columns = batch.getFieldVectors().size();
    ListVector dense = (ListVector) batch.getVector(columns - 1);
    Float4Vector values = (Float4Vector) dense.getDataVector();
    for (int r = 0; r < batch.getRowCount(); r++) {
      StringBuilder s = new StringBuilder(String.format("%08d", ((BigIntVector) batch.getVector(0)).get(r)));
      for (int c = 1; c < columns - 1; c++) {
        s.append(' ').append(Long.toHexString(Double.doubleToRawLongBits(((Float8Vector) batch.getVector(c)).get(r))));
      }
      int start = dense.getElementStartIndex(r);
      assertEquals(HistoryEmbedding.DIMS, dense.getElementEndIndex(r) - start);
      for (int d = 0; d < HistoryEmbedding.DIMS; d++) {
        s.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(values.get(start + d))));
      }
      out.add(s.toString());
    }
  }
}
