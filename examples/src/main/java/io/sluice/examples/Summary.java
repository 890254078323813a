package io.sluice.examples;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Prints the main job's summary from the files two runs of the pipeline left: the Sluice run
 * (RdmaShuffleManager, Flight with the READ data plane) and the stock run (Spark's sort shuffle,
 * plain gRPC Flight), side by side with their ratios. Exits non-zero if the trainer and the plain
 * Flight client did not see the same rows. Stateless.
 *
 * <pre>java -cp ... io.sluice.examples.Summary SLUICE_RUN_DIR STOCK_RUN_DIR</pre>
 */
public final class Summary {
  private Summary() {}

  /** The files of one run directory. */
  record Run(String name, Properties driver, Properties trainer, Properties plain) {
    static Run load(String name, Path dir) throws IOException {
      return new Run(name, props(dir.resolve("driver.properties")), props(dir.resolve("trainer.properties")),
          Files.exists(dir.resolve("plain.properties")) ? props(dir.resolve("plain.properties")) : new Properties());
    }

    long d(String key) {
      return Long.parseLong(driver.getProperty(key, "0"));
    }

    String t(String key) {
      return trainer.getProperty(key, "");
    }

    long tl(String key) {
      return Long.parseLong(trainer.getProperty(key, "0"));
    }

    int epochs() {
      return Integer.parseInt(trainer.getProperty("epochs"));
    }

    String shufflePaths() {
      List<String> parts = new ArrayList<>();
      driver.stringPropertyNames().stream().filter(k -> k.startsWith("shuffleBytes.")).sorted()
          .forEach(k -> parts.add(String.format("%.1f MB via %s", Long.parseLong(driver.getProperty(k)) / 1e6,
              k.substring("shuffleBytes.".length()))));
      return parts.isEmpty() ? "nothing remote" : String.join(", ", parts);
    }

    long waitMs() {
      return tl("epoch.1.waitMs");
    }
  }

  public static void main(String[] args) throws IOException {
    Run sluice = Run.load("sluice", Path.of(args[0]));
    Run stock = Run.load("stock", Path.of(args[1]));
    System.out.println();
    System.out.println("== Feature pipeline summary ==");
    System.out.printf("rows: %,d users from %,d raw events; %d features + label%n", sluice.d("rows"),
        sluice.d("events"), sluice.d("features"));
    for (Run r : List.of(sluice, stock)) {
      String plane = r.driver().getProperty("flightDataPlane");
      System.out.printf("%n[%s] shuffle manager %s; executors' Flight servers: %s%n", r.name(),
          r.driver().getProperty("shuffleManager"),
          plane.equals("grpc") ? "plain gRPC Flight only" : "READ data plane offered (transport " + plane + ")");
      System.out.printf("  shuffle: %.1f MB remote, %.1f MB local; by data path: %s; fetch wait %,d ms%n",
          r.d("shuffleRemoteBytes") / 1e6, r.d("shuffleLocalBytes") / 1e6, r.shufflePaths(), r.d("shuffleFetchWaitMs"));
      System.out.printf("  Flight to trainer: %.3f GB/s in epoch 1 (from its start, stream set-up included) over %s"
          + " (%.1f MB per epoch)%n",
          Double.parseDouble(r.t("epoch.1.gbPerSecond")), r.t("epoch.1.paths"), r.tl("epoch.1.bytes") / 1e6);
      StringBuilder losses = new StringBuilder();
      for (int e = 1; e <= r.epochs(); e++) {
        losses.append(String.format("%s%.5f", e == 1 ? "" : " -> ", Double.parseDouble(r.t("epoch." + e + ".loss"))));
      }
      System.out.println("  training loss by epoch: " + losses);
      System.out.printf("  time: raw events -> aggregate %.1f s, ML fit %.1f s, publish %.1f s,"
          + " trainer epoch 1 %.1f s (waiting for data %.2f s, computing %.2f s)%n",
          r.d("eventsToAggregateMs") / 1e3, r.d("fitMs") / 1e3, r.d("publishMs") / 1e3,
          r.tl("epoch.1.wallMs") / 1e3, r.waitMs() / 1e3, r.tl("epoch.1.computeMs") / 1e3);
      System.out.printf("  raw events -> end of first epoch: %.1f s%n", r.tl("firstEpochEndMs") / 1e3);
    }
    double total = ratio(sluice.tl("firstEpochEndMs"), stock.tl("firstEpochEndMs"));
    double wait = ratio(sluice.waitMs(), stock.waitMs());
    System.out.printf("%nsluice / stock: raw events -> end of first epoch %.2fx, trainer wait for data in epoch 1 %.2fx%n",
        total, wait);
    boolean same = sluice.t("digest").equals(stock.t("digest"));
    String plain = sluice.plain().getProperty("digest", "");
    System.out.printf("same features in both runs: %s (digest %s); flight-core FlightClient read %s rows, %s%n",
        same ? "yes" : "NO", sluice.t("digest"), sluice.plain().getProperty("rows", "no"),
        plain.equals(sluice.t("digest")) ? "the same table" : "A DIFFERENT TABLE");
    if (!same || !plain.equals(sluice.t("digest"))) {
      System.exit(1);
    }
  }

  private static double ratio(long a, long b) {
    return b == 0 ? Double.NaN : (double) a / b;
  }

  private static Properties props(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    return p;
  }
}
