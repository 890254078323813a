package io.sluice.examples.trainer;

import io.sluice.examples.pipeline.FeaturePipeline;
import io.sluice.examples.pipeline.HistoryEmbedding;
import io.sluice.flight.FlightOption;
import io.sluice.flight.loader.FlightLoader;
import io.sluice.flight.loader.LoadedShard;
import io.sluice.flight.loader.Shard;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The trainer: a JVM of its own that reads the published feature table, found by the catalog's URI
 * and the table's name ({@link CatalogTable}), through a {@link FlightLoader} (READ data plane
 * when the executors' servers offer it and {@code --data-plane} is not false; plain Flight
 * otherwise), epoch after epoch in a shuffled order, and trains {@link LogisticRegression} over
 * the Arrow batches. Per epoch it prints the GB/s delivered and the share of time it waited for
 * data.
 *
 * <pre>
 * SLUICE_SECRET=... java -cp ... io.sluice.examples.trainer.Trainer --run-dir DIR [--epochs 5]
 *     [--rank 0 --world 1] [--seed 1] [--prefetch 4] [--bind-host 127.0.0.1] [--data-plane true]
 * </pre>
 *
 * <p>Spark's secret comes from the environment ({@value FeaturePipeline#SECRET_ENV}); the tables'
 * secret is derived from it and the application id ({@link io.sluice.spark.tables.SluiceTables#tablesSecret}); with it the
 * loader mints its own call tokens. It reads the catalog's URI and the table's name from
 * {@code DIR/driver.properties}, writes {@code DIR/trainer.properties} (rank 0; other ranks
 * {@code trainer-RANK.properties}) and then {@code DIR/trainer.done}, which lets the driver stop
 * the executors. Single-threaded apart from the loader's readers.
 */
public final class Trainer {
  static final int MINI_BATCH = 256;
  static final double LEARNING_RATE = 0.2;
  static final Duration SHARD_DEADLINE = Duration.ofMinutes(5);

  /** How a trainer worker reads and trains. */
  public record Options(int epochs, int rank, int world, long seed, int prefetch, String bindHost,
      boolean dataPlane) {
    public static Options defaults() {
      return new Options(5, 0, 1, 1, 4, "127.0.0.1", true);
    }

    static Options parse(Map<String, String> m) {
      Options d = defaults();
      return new Options(number(m, "epochs", d.epochs()), number(m, "rank", d.rank()),
          number(m, "world", d.world()), number(m, "seed", d.seed()), number(m, "prefetch", d.prefetch()),
          m.getOrDefault("bind-host", d.bindHost()), parseBoolean("data-plane", m.getOrDefault("data-plane", "true")));
    }

    private static int number(Map<String, String> m, String key, long fallback) {
      String v = m.getOrDefault(key, Long.toString(fallback));
      try {
        return Integer.parseInt(v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("--" + key + " takes an integer, got '" + v + "'", e);
      }
    }

    private static boolean parseBoolean(String key, String v) {
      if (!v.equals("true") && !v.equals("false")) {
        throw new IllegalArgumentException("--" + key + " is true or false, got " + v);
      }
      return Boolean.parseBoolean(v);
    }
  }

  private Trainer() {}

  /**
   * Trains over the published table with the tables' {@code secret} ({@link io.sluice.spark.tables.SluiceTables#tablesSecret});
   * {@code digest} gets the first epoch's rows, {@code onEpoch} each epoch as it ends.
   */
  public static List<Epoch> train(CatalogTable table, String secret, Options o, TableDigest digest,
      Consumer<Epoch> onEpoch) throws InterruptedException, TimeoutException {
    Map<String, String> keys = new TreeMap<>();
    keys.put(TransportKeys.BIND_HOST.key(), o.bindHost());
    keys.put(FlightOption.DATA_PLANE.key(), Boolean.toString(o.dataPlane()));
    keys.put(TransportKeys.SECRET.key(), secret);
    List<Epoch> done = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator()) {
      CatalogTable.Listing listing = table.list(allocator, table.tokenFrom(secret));
      List<Shard> shards = listing.shards();
      LogisticRegression model = new LogisticRegression(listing.features(), HistoryEmbedding.DIMS, MINI_BATCH,
          LEARNING_RATE);
      try (FlightLoader loader = FlightLoader.builder(allocator, shards).rank(o.rank(), o.world()).seed(o.seed())
          .epochs(o.epochs()).prefetch(o.prefetch()).config(TransportConfig.of(keys)).build()) {
        while (!loader.finished()) {
          Epoch e = epoch(loader, model, done.isEmpty() ? digest : null);
          if (o.world() == 1 && e.rows() != table.rows()) {
            throw new IllegalStateException("epoch " + e.number() + " read " + e.rows() + " rows, the table has "
                + table.rows());
          }
          done.add(e);
          onEpoch.accept(e);
        }
      }
    }
    return done;
  }

  private static Epoch epoch(FlightLoader loader, LogisticRegression model, TableDigest digest)
      throws InterruptedException, TimeoutException {
    int number = loader.cursor().epoch() + 1;
    long start = System.nanoTime();
    long waited = 0;
    long computed = 0;
    long rows = 0;
    long bytes = 0;
    Map<String, Integer> paths = new TreeMap<>();
    while (true) {
      long t0 = System.nanoTime();
      Optional<LoadedShard> next = loader.next(SHARD_DEADLINE);
      long t1 = System.nanoTime();
      waited += t1 - t0;
      if (next.isEmpty()) {
        break;
      }
      try (LoadedShard shard = next.get()) {
        for (VectorSchemaRoot batch : shard.batches()) {
          model.train(batch);
          if (digest != null) {
            digest.add(batch);
          }
        }
        rows += shard.rows();
        bytes += shard.bodyBytes();
        paths.merge(shard.dataPath(), 1, Integer::sum);
      }
      computed += System.nanoTime() - t1;
    }
    return new Epoch(number, model.takeLoss(), ms(waited), ms(computed), ms(System.nanoTime() - start), rows, bytes,
        Map.copyOf(paths), System.currentTimeMillis());
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> m = new TreeMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      m.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    if (!m.containsKey("run-dir") || args.length % 2 != 0) {
      throw new IllegalArgumentException("usage: --run-dir DIR [--epochs N] [--rank R --world W] [--seed S]"
          + " [--prefetch P] [--bind-host H] [--data-plane true|false]");
    }
    Path dir = Path.of(m.get("run-dir"));
    Options o = Options.parse(m);
    try {
      String secret = System.getenv(FeaturePipeline.SECRET_ENV);
      if (secret == null || secret.isEmpty()) {
        throw new IllegalArgumentException("the trainer reads with the tables' secret: set "
            + FeaturePipeline.SECRET_ENV + " as for the pipeline's driver");
      }
      CatalogTable table = CatalogTable.read(dir);
      Properties driver = CatalogTable.driverProperties(dir);
      long startedMs = Long.parseLong(driver.getProperty("startedMs"));
      String tablesSecret = io.sluice.spark.tables.SluiceTables.tablesSecret(secret, driver.getProperty("applicationId"));
      System.out.printf("[trainer] rank %d of %d: %d epochs over table '%s' at %s (%,d rows), prefetch %d%n",
          o.rank(), o.world(), o.epochs(), table.name(), table.catalog(), table.rows(), o.prefetch());
      TableDigest digest = new TableDigest();
      List<Epoch> result = train(table, tablesSecret, o, digest, e -> System.out.println("[trainer] " + e));
      write(dir.resolve(o.rank() == 0 ? "trainer.properties" : "trainer-" + o.rank() + ".properties"), startedMs,
          result, digest);
    } finally {
      if (o.rank() == 0) {
        Files.writeString(dir.resolve("trainer.done"), "");
      }
    }
  }

  private static void write(Path file, long startedMs, List<Epoch> epochs, TableDigest digest)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("digest", digest.value());
    p.setProperty("digestRows", Long.toString(digest.rows()));
    p.setProperty("lastEpochEndMs", Long.toString(epochs.get(epochs.size() - 1).endMs() - startedMs));
    long bytes = 0;
    long wall = 0;
    long wait = 0;
    for (Epoch e : epochs) {
      String k = "epoch." + e.number() + ".";
      p.setProperty(k + "loss", Double.toString(e.loss()));
      p.setProperty(k + "waitMs", Long.toString(e.waitMs()));
      p.setProperty(k + "computeMs", Long.toString(e.computeMs()));
      p.setProperty(k + "wallMs", Long.toString(e.wallMs()));
      p.setProperty(k + "bytes", Long.toString(e.bytes()));
      p.setProperty(k + "paths", String.join("+", e.paths().keySet()));
      bytes += e.bytes();
      wall += e.wallMs();
      wait += e.waitMs();
    }
    p.setProperty("epochs", Integer.toString(epochs.size()));
    p.setProperty("bytes", Long.toString(bytes));
    p.setProperty("wallMs", Long.toString(wall));
    p.setProperty("waitMs", Long.toString(wait));
    p.setProperty("paths", String.join("+", epochs.get(0).paths().keySet()));
    try (Writer w = Files.newBufferedWriter(file)) {
      p.store(w, "feature pipeline trainer");
    }
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
