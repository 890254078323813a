package io.sluice.examples.pipeline;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The feature pipeline's Spark job: raw events ({@link RawEvents}) become per-user features
 * ({@link Features}), which every executor publishes through its own Flight server; the driver
 * writes where ({@link PublishedTable}) and keeps the executors until the trainer says it is done.
 * With {@code --parquet DIR} the features are written as Parquet files instead
 * ({@link ParquetFeatures}), the hand-off the Flight path is measured against.
 *
 * <pre>
 * spark-submit --class io.sluice.examples.pipeline.FeaturePipeline sluice-examples.jar \
 *     --run-dir DIR [--users N] [--events-per-user N] [--flight sluice|grpc] [--parquet DIR] [--executors N]
 *     [--serve-seconds S]
 * </pre>
 *
 * <p>{@code --flight sluice} serves with the READ data plane (a fresh shared secret is written to
 * the endpoints file, readable by its owner only); {@code grpc} serves plain Flight. The shuffle
 * manager is whatever Spark is configured with. Results go to {@code DIR/driver.properties},
 * written last (after the endpoints file): a trainer may start once it exists.
 */
public final class FeaturePipeline {
  public static final String TABLE = "features";

  /** What a run was asked to do. */
  public record Options(Path runDir, long users, int eventsPerUser, boolean dataPlane, int executors,
      long serveSeconds, Optional<Path> parquet) {
    static Options parse(String[] args) {
      Map<String, String> m = new TreeMap<>();
      for (int i = 0; i + 1 < args.length; i += 2) {
        if (!args[i].startsWith("--")) {
          throw new IllegalArgumentException("expected --key value pairs, got " + args[i]);
        }
        m.put(args[i].substring(2), args[i + 1]);
      }
      if (args.length % 2 != 0 || !m.containsKey("run-dir")) {
        throw new IllegalArgumentException("usage: --run-dir DIR [--users N] [--events-per-user N]"
            + " [--flight sluice|grpc] [--parquet DIR] [--executors N] [--serve-seconds S]");
      }
      String flight = m.getOrDefault("flight", "sluice");
      if (!flight.equals("sluice") && !flight.equals("grpc")) {
        throw new IllegalArgumentException("--flight is sluice or grpc, got " + flight);
      }
      return new Options(Path.of(m.get("run-dir")), Long.parseLong(m.getOrDefault("users", "10000").replace("_", "")),
          Integer.parseInt(m.getOrDefault("events-per-user", Integer.toString(RawEvents.DEFAULT_EVENTS_PER_USER))),
          flight.equals("sluice"), Integer.parseInt(m.getOrDefault("executors", "2")),
          Long.parseLong(m.getOrDefault("serve-seconds", "900")), Optional.ofNullable(m.get("parquet")).map(Path::of));
    }
  }

  /** A run's outcome: where the table is served (none when it went to Parquet), and the driver's measurements. */
  public record Result(Optional<PublishedTable> table, Properties measurements) {}

  private FeaturePipeline() {}

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    Files.createDirectories(o.runDir());
    try (SparkSession spark = SparkSession.builder().appName("sluice-feature-pipeline").getOrCreate()) {
      JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      awaitExecutors(sc, o.executors(), 180);
      progress("Spark is up: " + o.executors() + " executors, shuffle manager "
          + spark.conf().get("spark.shuffle.manager", "sort"));
      Result r = run(spark, o, (msg) -> progress(msg));
      if (r.table().isPresent()) {
        r.table().get().write(o.runDir());
      }
      Path written = o.runDir().resolve("driver.properties.tmp");
      try (Writer w = Files.newBufferedWriter(written)) {
        r.measurements().store(w, "feature pipeline driver");
      }
      Files.move(written, o.runDir().resolve("driver.properties"), StandardCopyOption.ATOMIC_MOVE);
      progress((r.table().isPresent() ? "serving " + r.table().get().locations().size() + " endpoints; " : "")
          + "waiting (at most " + o.serveSeconds() + " s) for the trainer to finish");
      awaitFile(o.runDir().resolve("trainer.done"), o.serveSeconds());
      progress("trainer done; stopping the executors");
    }
  }

  /**
   * Builds and publishes the features; the executors keep serving until the context stops.
   * {@code progress} gets one line per step.
   */
  public static Result run(SparkSession spark, Options o, java.util.function.Consumer<String> progress)
      throws java.util.concurrent.TimeoutException {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    ShuffleReadTotals shuffle = new ShuffleReadTotals();
    sc.sc().addSparkListener(shuffle);
    String secret = o.dataPlane() ? HexFormat.of().formatHex(new SecureRandom().generateSeed(24)) : "";
    long startedMs = System.currentTimeMillis();
    long t0 = System.nanoTime();
    RawEvents raw = new RawEvents(spark, o.users(), o.eventsPerUser(), Math.max(4, 2 * o.executors()));
    Dataset<Row> aggregate = Features.aggregate(raw);
    long users = aggregate.count();
    long t1 = System.nanoTime();
    progress.accept(String.format("raw events: %,d events of %,d users on %,d items generated, joined and"
        + " aggregated into %,d user rows in %.1f s", raw.eventCount(), raw.userCount(), raw.itemCount(), users, sec(t1 - t0)));
    PipelineModel model = Features.fit(aggregate);
    int width = Features.width(model);
    long t2 = System.nanoTime();
    progress.accept(String.format("ML stages fitted (StringIndexer, OneHotEncoder, VectorAssembler,"
        + " StandardScaler): %d features in %.1f s", width, sec(t2 - t1)));
    Dataset<Row> features = Features.transform(model, aggregate).coalesce(o.executors());
    long featuresComputedMs = System.currentTimeMillis();
    Map<String, String> byExecutor = new TreeMap<>();
    long rows = 0;
    int shards = 0;
    long bytes = 0;
    String plane = "grpc";
    if (o.parquet().isPresent()) {
      bytes = ParquetFeatures.write(features, width, raw.itemCount(), o.parquet().get());
      rows = users;
      plane = "parquet";
    } else {
      List<String> published = features.toJavaRDD()
          .mapPartitions(new FeaturePublisher(TABLE, secret, width, raw.itemCount())).collect();
      for (String line : published) {
        String[] f = line.split(" ");
        byExecutor.put(f[0], f[1]);
        plane = f[2];
        rows += Long.parseLong(f[3]);
        shards += Integer.parseInt(f[5]);
        bytes += Long.parseLong(f[6]);
      }
    }
    long t3 = System.nanoTime();
    if (o.parquet().isPresent()) {
      progress.accept(String.format("features written as Parquet (%.1f MB, snappy, %d MiB row groups) to %s in %.1f s",
          bytes / 1e6, ParquetFeatures.ROW_GROUP_BYTES >> 20, o.parquet().get(), sec(t3 - t2)));
    } else {
      progress.accept(String.format("features published as %d shards (%.1f MB, %d float64 features and a %d-float"
          + " embedding per user) from %d executors (%s) over Flight, data plane %s, in %.1f s", shards, bytes / 1e6,
          width, HistoryEmbedding.DIMS, byExecutor.size(), String.join(", ", byExecutor.values()), plane,
          sec(t3 - t2)));
    }
    aggregate.unpersist();
    ShuffleReport report = ShuffleReport.collect(sc, shuffle);
    Properties m = new Properties();
    m.setProperty("shuffleManager", spark.conf().get("spark.shuffle.manager", "sort"));
    m.setProperty("flightDataPlane", plane);
    m.setProperty("users", Long.toString(raw.userCount()));
    m.setProperty("events", Long.toString(raw.eventCount()));
    m.setProperty("rows", Long.toString(rows));
    m.setProperty("features", Integer.toString(width));
    m.setProperty("shards", Integer.toString(shards));
    m.setProperty("tableBytes", Long.toString(bytes));
    m.setProperty("sparkMs", Long.toString(ms(t3 - t0)));
    m.setProperty("featuresMs", Long.toString(ms(t2 - t0)));
    m.setProperty("startedMs", Long.toString(startedMs));
    m.setProperty("featuresComputedMs", Long.toString(featuresComputedMs));
    o.parquet().ifPresent(dir -> m.setProperty("parquetDir", dir.toAbsolutePath().toString()));
    m.setProperty("eventsToAggregateMs", Long.toString(ms(t1 - t0)));
    m.setProperty("fitMs", Long.toString(ms(t2 - t1)));
    m.setProperty("publishMs", Long.toString(ms(t3 - t2)));
    m.setProperty("shuffleRemoteBytes", Long.toString(report.totals().remoteBytes()));
    m.setProperty("shuffleLocalBytes", Long.toString(report.totals().localBytes()));
    m.setProperty("shuffleFetchWaitMs", Long.toString(report.totals().fetchWaitMs()));
    report.bytesByPath().forEach((p, n) -> m.setProperty("shuffleBytes." + p, Long.toString(n)));
    Optional<PublishedTable> table = o.parquet().isPresent() ? Optional.empty()
        : Optional.of(PublishedTable.of(TABLE, secret, new ArrayList<>(byExecutor.values()), rows, width, shards,
            bytes, startedMs));
    return new Result(table, m);
  }

  static void awaitExecutors(JavaSparkContext sc, int count, int seconds) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (sc.sc().getExecutorIds().size() < count) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(count + " executors did not register within " + seconds + " s");
      }
      Thread.sleep(200);
    }
  }

  private static void awaitFile(Path file, long seconds) throws InterruptedException, IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new IOException("no " + file + " within " + seconds + " s: the trainer did not finish");
      }
      Thread.sleep(100);
    }
  }

  private static void progress(String line) {
    System.out.println("[pipeline] " + line);
    System.out.flush();
  }

  private static double sec(long nanos) {
    return nanos / 1e9;
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
