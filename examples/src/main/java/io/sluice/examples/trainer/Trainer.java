package io.sluice.examples.trainer;

import io.sluice.examples.pipeline.PublishedTable;
import io.sluice.flight.FlightOption;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The trainer: a JVM of its own that reads the feature table from every executor's Flight
 * endpoint in parallel with {@link SluiceFlightClient} (READ data plane when the servers offer it
 * and the secret matches and {@code --data-plane} is not false, plain Flight otherwise) and trains {@link LogisticRegression} over the
 * Arrow batches, printing per epoch the loss and the time spent waiting for data versus computing.
 *
 * <pre>
 * java -cp ... io.sluice.examples.trainer.Trainer --run-dir DIR [--epochs N] [--bind-host H] [--data-plane B]
 * </pre>
 *
 * <p>It finds the endpoints in {@code DIR/endpoints.properties} (written by the pipeline's driver),
 * writes {@code DIR/trainer.properties} and then {@code DIR/trainer.done}, which lets the driver
 * stop the executors. Single-threaded apart from the readers of {@link FeatureFeed}.
 */
public final class Trainer {
  static final int MINI_BATCH = 256;
  static final double LEARNING_RATE = 0.2;
  static final long EPOCH_DEADLINE_SECONDS = 600;

  private Trainer() {}

  /** Trains {@code epochs} epochs over the published table; {@code digest} gets epoch 1's rows. */
  public static List<Epoch> train(PublishedTable table, int epochs, String bindHost, boolean dataPlane,
      TableDigest digest, java.util.function.Consumer<Epoch> onEpoch) throws InterruptedException {
    Map<String, String> keys = new TreeMap<>();
    keys.put(TransportKeys.BIND_HOST.key(), bindHost);
    keys.put(FlightOption.DATA_PLANE.key(), Boolean.toString(dataPlane));
    if (!table.secret().isEmpty()) {
      keys.put(TransportKeys.SECRET.key(), table.secret());
    }
    TransportConfig config = TransportConfig.of(keys);
    List<Epoch> done = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(table.locations().size());
    try (BufferAllocator allocator = new RootAllocator()) {
      List<SluiceFlightClient> clients = new ArrayList<>();
      try {
        for (String uri : table.locations()) {
          Location l = new Location(URI.create(uri));
          clients.add(table.secret().isEmpty() ? SluiceFlightClient.connect(allocator, l)
              : SluiceFlightClient.connect(allocator, l, config));
        }
        LogisticRegression model = new LogisticRegression(table.features(), MINI_BATCH, LEARNING_RATE);
        for (int e = 1; e <= epochs; e++) {
          Epoch epoch = epoch(e, clients, table, allocator, pool, model, e == 1 ? digest : null);
          done.add(epoch);
          onEpoch.accept(epoch);
        }
      } finally {
        clients.forEach(SluiceFlightClient::close);
      }
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(30, TimeUnit.SECONDS);
    }
    return done;
  }

  private static Epoch epoch(int number, List<SluiceFlightClient> clients, PublishedTable table,
      BufferAllocator allocator, ExecutorService pool, LogisticRegression model, TableDigest digest)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + TimeUnit.SECONDS.toNanos(EPOCH_DEADLINE_SECONDS);
    long waited = 0;
    long computed = 0;
    long rows = 0;
    try (FeatureFeed feed = new FeatureFeed(clients, SluiceFlightServer.ticket(table.table()), allocator, pool)) {
      while (true) {
        long t0 = System.nanoTime();
        Optional<VectorSchemaRoot> next = feed.next(deadline);
        long t1 = System.nanoTime();
        waited += t1 - t0;
        if (next.isEmpty()) {
          break;
        }
        try (VectorSchemaRoot batch = next.get()) {
          model.train(batch);
          if (digest != null) {
            digest.add(batch);
          }
          rows += batch.getRowCount();
        }
        computed += System.nanoTime() - t1;
      }
      if (rows != table.rows()) {
        throw new IllegalStateException("epoch " + number + " read " + rows + " rows, the table has " + table.rows());
      }
      return new Epoch(number, model.takeLoss(), ms(waited), ms(computed), ms(System.nanoTime() - start), rows,
          feed.bytes(), feed.bytes() / (feed.readNanos() / 1e9) / 1e9, Map.copyOf(feed.paths()),
          System.currentTimeMillis());
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> m = new TreeMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      m.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    if (!m.containsKey("run-dir")) {
      throw new IllegalArgumentException("usage: --run-dir DIR [--epochs N] [--bind-host H] [--data-plane true|false]");
    }
    Path dir = Path.of(m.get("run-dir"));
    int epochs = Integer.parseInt(m.getOrDefault("epochs", "3"));
    try {
      PublishedTable table = PublishedTable.read(dir);
      System.out.printf("[trainer] reading table '%s' (%,d rows, %d features) from %d endpoints: %s%n",
          table.table(), table.rows(), table.features(), table.locations().size(), table.locations());
      TableDigest digest = new TableDigest();
      List<Epoch> result = train(table, epochs, m.getOrDefault("bind-host", "127.0.0.1"),
          Boolean.parseBoolean(m.getOrDefault("data-plane", "true")), digest,
          e -> System.out.println("[trainer] " + e));
      write(dir, table, result, digest);
    } finally {
      Files.writeString(dir.resolve("trainer.done"), "");
    }
  }

  private static void write(Path dir, PublishedTable table, List<Epoch> epochs, TableDigest digest)
      throws IOException {
    Properties p = new Properties();
    p.setProperty("digest", digest.value());
    p.setProperty("digestRows", Long.toString(digest.rows()));
    p.setProperty("firstEpochEndMs", Long.toString(epochs.get(0).endMs() - table.startedMs()));
    for (Epoch e : epochs) {
      String k = "epoch." + e.number() + ".";
      p.setProperty(k + "loss", Double.toString(e.loss()));
      p.setProperty(k + "waitMs", Long.toString(e.waitMs()));
      p.setProperty(k + "computeMs", Long.toString(e.computeMs()));
      p.setProperty(k + "wallMs", Long.toString(e.wallMs()));
      p.setProperty(k + "bytes", Long.toString(e.bytes()));
      p.setProperty(k + "gbPerSecond", Double.toString(e.flightGbPerSecond()));
      p.setProperty(k + "paths", String.join("+", e.paths().keySet()));
    }
    p.setProperty("epochs", Integer.toString(epochs.size()));
    try (Writer w = Files.newBufferedWriter(dir.resolve("trainer.properties"))) {
      p.store(w, "feature pipeline trainer");
    }
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
