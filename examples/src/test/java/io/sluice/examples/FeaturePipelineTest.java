package io.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.examples.pipeline.FeaturePipeline;
import io.sluice.examples.pipeline.HistoryEmbedding;
import io.sluice.examples.pipeline.PublishedTable;
import io.sluice.examples.trainer.Epoch;
import io.sluice.examples.trainer.PlainFlightReader;
import io.sluice.examples.trainer.TableDigest;
import io.sluice.examples.trainer.Trainer;
import io.sluice.flight.CallToken;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.TableReader;
import io.sluice.flight.loader.Shard;
import io.sluice.flight.loader.Shards;
import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The pipeline at a tiny scale on a real local-cluster, once with RdmaShuffleManager and executors
 * serving with the READ data plane, once with Spark's sort shuffle and executors serving plain
 * Flight: the feature rows are the same bit for bit (sorted) whichever shuffle built them and
 * whichever Flight path carried them (READ over the transport, gRPC from the same server, gRPC
 * from a server without the data plane), flight-core's plain FlightClient reads the same rows
 * presenting the executors' call token and nothing without it, and the trainer's loss goes down
 * epoch by epoch.
 */
class FeaturePipelineTest {
  static final long USERS = 3000;

  /** Rows read one way, sorted, each as user_id and the raw bits of every double. */
  record Read(String path, List<String> rows) {}

  @Test
  void sameFeaturesUnderBothShuffleManagersAndFlightPaths() throws Exception {
    List<Read> sluice = new ArrayList<>();
    List<Epoch> epochs = new ArrayList<>();
    TableDigest trained = new TableDigest();
    TableDigest plainReader = new TableDigest();
    runPipeline(true, table -> {
      assertTrue(table.callToken(table.locations().get(0)).isPresent(), "the executors serve with a secret");
      assertEquals(FlightStatusCode.UNAUTHENTICATED, assertThrows(FlightRuntimeException.class,
          () -> readWithPlainFlightClient(table, false)).status().code(), "a call without the token was answered");
      sluice.add(readWithSluiceClient(table, true));
      sluice.add(readWithSluiceClient(table, false));
      sluice.add(readWithPlainFlightClient(table, true));
      PlainFlightReader.read(table, plainReader);
      epochs.addAll(Trainer.train(table, new Trainer.Options(3, 0, 1, 1, 2, "127.0.0.1", true), trained,
          e -> { }));
    });
    List<Read> stock = new ArrayList<>();
    runPipeline(false, table -> stock.add(readWithSluiceClient(table, true)));
    List<String> parquet = new ArrayList<>();
    Path files = Files.createTempDirectory("pipeline-test-parquet").resolve("features");
    runSpark(false, Optional.of(files), (spark, result) -> {
      assertTrue(result.table().isEmpty(), "a Parquet run publishes nothing over Flight");
      assertEquals("parquet", result.measurements().getProperty("flightDataPlane"));
      parquet.addAll(render(spark.read().parquet(files.toString())));
    });

    assertTrue(Set.of("shm", "tcp").contains(sluice.get(0).path()), "data plane path " + sluice.get(0).path());
    assertEquals("grpc", sluice.get(1).path());
    assertEquals("grpc", stock.get(0).path(), "a server without the data plane serves plain Flight");
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
    void accept(PublishedTable table) throws Exception;
  }

  interface RunCheck {
    void accept(SparkSession spark, FeaturePipeline.Result result) throws Exception;
  }

  /** Runs the pipeline on a fresh local-cluster and checks its table while the executors serve it. */
  static void runPipeline(boolean sluice, TableCheck check) throws Exception {
    runSpark(sluice, Optional.empty(), (spark, result) -> {
      PublishedTable table = result.table().orElseThrow();
      assertEquals(USERS, table.rows());
      assertEquals(2, table.locations().size(), "one endpoint per executor: " + table.locations());
      check.accept(table);
    });
  }

  /** Runs the pipeline on a fresh local-cluster (to Flight, or to Parquet files) and checks it while Spark runs. */
  static void runSpark(boolean sluice, Optional<Path> parquet, RunCheck check) throws Exception {
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
        .set("spark.sql.shuffle.partitions", "6")
        .set("spark.sql.autoBroadcastJoinThreshold", "-1");
    if (sluice) {
      conf.set("spark.shuffle.manager", "org.apache.spark.shuffle.rdma.RdmaShuffleManager");
    }
    Path dir = Files.createTempDirectory("pipeline-test");
    try (SparkSession spark = SparkSession.builder().config(conf).getOrCreate()) {
      FeaturePipeline.Options o = new FeaturePipeline.Options(dir, USERS, 40, sluice, 2, 60, parquet);
      awaitExecutors(spark, 2);
      check.accept(spark, FeaturePipeline.run(spark, o, line -> { }));
    }
  }

  static void awaitExecutors(SparkSession spark, int count) {
    Eventually.matches(count + " executors registered (logs of those that did not start: "
        + System.getProperty("sluice.test.sparkHome") + "/work)", Duration.ofSeconds(120),
        () -> spark.sparkContext().getExecutorIds().size(), n -> n >= count);
  }

  static Read readWithSluiceClient(PublishedTable table, boolean dataPlane) throws InterruptedException {
    Map<String, String> keys = new java.util.HashMap<>(Map.of("sluice.transport.bindHost", "127.0.0.1",
        "sluice.flight.dataPlane", Boolean.toString(dataPlane)));
    if (!table.secret().isEmpty()) {
      keys.put("sluice.transport.secret", table.secret());
    }
    List<String> rows = new ArrayList<>();
    String path = null;
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Shard shard : shards(allocator, table)) {
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, shard.location(),
                TransportConfig.of(keys));
             TableReader stream = client.getStream(shard.ticket())) {
          while (stream.next()) {
            render(stream.getRoot(), rows);
          }
          path = stream.dataPath();
        }
      }
    }
    Collections.sort(rows);
    return new Read(path, rows);
  }

  /** Every shard with flight-core's own client, presenting the executors' call token or not. */
  static Read readWithPlainFlightClient(PublishedTable table, boolean withToken) throws Exception {
    List<String> rows = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      for (Shard shard : shards(allocator, table)) {
        try (FlightClient client = FlightClient.builder(allocator, shard.location()).build();
             FlightStream stream = withToken
                 ? client.getStream(shard.ticket(), CallToken.callOption(table.callToken(shard.location().getUri().toString()).orElseThrow()))
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

  static List<Shard> shards(BufferAllocator allocator, PublishedTable table) throws InterruptedException {
    List<Shard> shards = Shards.list(allocator, table.locations().stream().map(u -> new Location(URI.create(u)))
        .toList(), table.shardPrefix(), Duration.ofSeconds(30),
        TransportConfig.of(Map.of("sluice.transport.secret", table.secret())));
    assertEquals(table.shards(), shards.size());
    return shards;
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
    FixedSizeListVector dense = (FixedSizeListVector) batch.getVector(columns - 1);
    assertEquals(HistoryEmbedding.DIMS, dense.getListSize());
    Float4Vector values = (Float4Vector) dense.getDataVector();
    for (int r = 0; r < batch.getRowCount(); r++) {
      StringBuilder s = new StringBuilder(String.format("%08d", ((BigIntVector) batch.getVector(0)).get(r)));
      for (int c = 1; c < columns - 1; c++) {
        s.append(' ').append(Long.toHexString(Double.doubleToRawLongBits(((Float8Vector) batch.getVector(c)).get(r))));
      }
      for (int d = 0; d < HistoryEmbedding.DIMS; d++) {
        s.append(' ').append(Integer.toHexString(Float.floatToRawIntBits(values.get(r * HistoryEmbedding.DIMS + d))));
      }
      out.add(s.toString());
    }
  }
}
