package io.sluice.examples.pipeline;

import io.sluice.spark.tables.PublishedTable;
import io.sluice.spark.tables.SluiceTables;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The feature pipeline's Spark job: raw events ({@link RawEvents}) become the per-user feature
 * table ({@link Features#table}), which the job publishes with {@link SluiceTables#publish}: the
 * executors hold and serve it, and the driver's catalog names it. The driver writes where (the
 * catalog's URI and the table's name) and keeps the executors until the trainer says it is done.
 * With {@code --parquet DIR} the same table is written as Parquet files instead
 * ({@link ParquetFeatures}), the hand-off publishing is measured against.
 *
 * <pre>
 * SLUICE_SECRET=... spark-submit --class io.sluice.examples.pipeline.FeaturePipeline sluice-examples.jar \
 *     --run-dir DIR [--users N] [--events-per-user N] [--parquet DIR] [--executors N] [--serve-seconds S]
 * </pre>
 *
 * <p>The secret comes from the environment ({@value #SECRET_ENV}) and nowhere else: the driver
 * turns on Spark's authentication with it ({@code spark.authenticate}); the published tables'
 * secret is derived from it and the application id, so a trainer given the same variable (and the
 * application id, in driver.properties) reads over the READ data plane.
 * Without it the tables' secret is one the driver makes, and trainers read with the catalog token
 * alone (plain Flight). The shuffle manager is whatever Spark is configured with. Results go to
 * {@code DIR/driver.properties} (readable by its owner only: it holds a catalog token, valid while
 * the driver serves), written once the table is served: a trainer may start once it exists.
 */
public final class FeaturePipeline {
  public static final String TABLE = "features";
  /** Rows per record batch, and so per shard. */
  public static final int BATCH_ROWS = 8192;
  /** The environment variable that holds the tables' secret (Spark's authentication secret). */
  public static final String SECRET_ENV = "SLUICE_SECRET";

  /** What a run was asked to do. */
  public record Options(Path runDir, long users, int eventsPerUser, int executors, long serveSeconds,
      Optional<Path> parquet) {
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
            + " [--parquet DIR] [--executors N] [--serve-seconds S]");
      }
      return new Options(Path.of(m.get("run-dir")), Long.parseLong(m.getOrDefault("users", "10000").replace("_", "")),
          Integer.parseInt(m.getOrDefault("events-per-user", Integer.toString(RawEvents.DEFAULT_EVENTS_PER_USER))),
          Integer.parseInt(m.getOrDefault("executors", "2")),
          Long.parseLong(m.getOrDefault("serve-seconds", "900")), Optional.ofNullable(m.get("parquet")).map(Path::of));
    }
  }

  /** A run's outcome: the published table (none when it went to Parquet), and the driver's measurements. */
  public record Result(Optional<PublishedTable> table, Properties measurements) {}

  private FeaturePipeline() {}

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    Files.createDirectories(o.runDir());
    SparkConf conf = new SparkConf();
    String secret = System.getenv(SECRET_ENV);
    if (secret != null && !secret.isEmpty()) {
      conf.set("spark.authenticate", "true").set("spark.authenticate.secret", secret);
    }
    try (SparkSession spark = SparkSession.builder().config(conf).appName("sluice-feature-pipeline").getOrCreate()) {
      JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      awaitExecutors(sc, o.executors(), 180);
      progress("Spark is up: " + o.executors() + " executors, shuffle manager "
          + spark.conf().get("spark.shuffle.manager", "sort") + ", authentication "
          + (conf.contains("spark.authenticate.secret") ? "on (" + SECRET_ENV + ")" : "off: the tables' secret is the"
          + " driver's own, trainers read with the catalog token"));
      Result r = run(spark, o, (msg) -> progress(msg));
      Properties p = r.measurements();
      r.table().ifPresent(t -> {
        p.setProperty("catalog", t.uri());
        p.setProperty("table", t.name());
        // Not secret: with Spark's secret it derives the tables' (SluiceTables.secret).
        p.setProperty("applicationId", spark.sparkContext().applicationId());
        // Not the secret: a token for the catalog alone, valid while the driver serves.
        p.setProperty("catalogToken", SluiceTables.catalogToken(spark, Duration.ofSeconds(o.serveSeconds() + 300)));
      });
      writeOwnerOnly(o.runDir().resolve("driver.properties"), p, "feature pipeline driver");
      progress((r.table().isPresent() ? "serving table '" + TABLE + "' at " + r.table().get().uri() + "; " : "")
          + "waiting (at most " + o.serveSeconds() + " s) for the trainer to finish");
      awaitFile(o.runDir().resolve("trainer.done"), o.serveSeconds());
      progress("trainer done; stopping the executors");
    }
  }

  /** Writes {@code p} to {@code file}, readable by its owner only, in one step (a reader never sees a part). */
  public static void writeOwnerOnly(Path file, Properties p, String comment) throws IOException {
    Path written = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(written);
    Files.createFile(written, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try (Writer w = Files.newBufferedWriter(written)) {
      p.store(w, comment);
    }
    Files.move(written, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * Builds the feature table and publishes it (or writes it as Parquet); the executors keep
   * serving it until the context stops. {@code progress} gets one line per step.
   */
  public static Result run(SparkSession spark, Options o, java.util.function.Consumer<String> progress)
      throws java.util.concurrent.TimeoutException {
    JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    ShuffleReadTotals shuffle = new ShuffleReadTotals();
    sc.sc().addSparkListener(shuffle);
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
    Dataset<Row> table = Features.table(Features.transform(model, aggregate), width, raw.itemCount())
        .coalesce(o.executors());
    long featuresComputedMs = System.currentTimeMillis();
    Optional<PublishedTable> published = Optional.empty();
    long rows;
    long bytes;
    int shards = 0;
    String plane;
    if (o.parquet().isPresent()) {
      bytes = ParquetFeatures.write(table, o.parquet().get());
      rows = users;
      plane = "parquet";
    } else {
      PublishedTable t = SluiceTables.publish(table, TABLE, Map.of("batchRows", Integer.toString(BATCH_ROWS)));
      published = Optional.of(t);
      rows = t.rows();
      bytes = t.bytes();
      shards = t.shards().size();
      plane = t.dataPlane();
    }
    long t3 = System.nanoTime();
    if (published.isEmpty()) {
      progress.accept(String.format("features written as Parquet (%.1f MB, snappy, %d MiB row groups) to %s in %.1f s",
          bytes / 1e6, ParquetFeatures.ROW_GROUP_BYTES >> 20, o.parquet().get(), sec(t3 - t2)));
    } else {
      PublishedTable t = published.get();
      progress.accept(String.format("features published as table '%s' (SluiceTables.publish): %d shards (%.1f MB,"
          + " %d float64 features and a %d-float embedding per user) on %d executors (%s), data plane %s, in %.1f s",
          t.name(), shards, bytes / 1e6, width, HistoryEmbedding.DIMS, t.endpoints().size(),
          String.join(", ", t.endpoints()), plane, sec(t3 - t2)));
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
    return new Result(published, m);
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
