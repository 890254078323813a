package io.sluice.examples;

import io.sluice.examples.pipeline.HistoryEmbedding;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultsFile;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.ToDoubleFunction;

/**
 * Prints the main job's fair summary from the run directories the alternated runs left (each
 * named {@code N-sluice} or {@code N-stock}, N the run's place in the order): per configuration the
 * median and the spread of each hop (Spark's time, the shuffle's fetch wait, the Flight hop's GB/s
 * over all epochs, the trainer's share of time waiting for data, raw events to the end of the last
 * epoch), the order the runs went in, and sluice / stock ratios of the medians. Writes the medians
 * to a results file ({@link ResultsFile}; stock is the baseline). Exits non-zero if any run's
 * trainer, or the plain Flight client, saw different features. Stateless.
 *
 * <pre>java -cp ... io.sluice.examples.Summary RESULTS_JSON RUN_DIR...</pre>
 */
public final class Summary {
  private Summary() {}

  /** The files of one run directory. */
  record Run(String name, String config, Properties driver, Properties trainer, Properties plain) {
    static Run load(Path dir) throws IOException {
      String name = dir.getFileName().toString();
      String config = name.substring(name.indexOf('-') + 1);
      if (!config.equals("sluice") && !config.equals("stock")) {
        throw new IllegalArgumentException("a run directory is named N-sluice or N-stock, got " + dir);
      }
      return new Run(name, config, props(dir.resolve("driver.properties")), props(dir.resolve("trainer.properties")),
          Files.exists(dir.resolve("plain.properties")) ? props(dir.resolve("plain.properties")) : new Properties());
    }

    double d(String key) {
      return Double.parseDouble(driver.getProperty(key, "0"));
    }

    double t(String key) {
      return Double.parseDouble(trainer.getProperty(key, "0"));
    }
  }

  /** One hop's figure: how to read it from a run, its unit, its results-file name. */
  record Hop(String label, String unit, String format, String key, ToDoubleFunction<Run> value) {}

  static final List<Hop> HOPS = List.of(
      new Hop("Spark: raw events -> features published", "s", "%.1f", "pipeline.spark", r -> r.d("sparkMs") / 1e3),
      new Hop("shuffle fetch wait", "ms", "%.0f", "pipeline.shuffle_fetch_wait", r -> r.d("shuffleFetchWaitMs")),
      new Hop("Flight hop to the trainer, all epochs", "GB/s", "%.3f", "pipeline.flight_hop",
          r -> r.t("bytes") / (Math.max(1, r.t("wallMs")) / 1e3) / 1e9),
      new Hop("trainer's share of time waiting for data", "share", "%.3f", "pipeline.trainer_wait_share",
          r -> r.t("waitMs") / Math.max(1, r.t("wallMs"))),
      new Hop("end to end: raw events -> end of last epoch", "s", "%.1f", "pipeline.end_to_end",
          r -> r.t("lastEpochEndMs") / 1e3));

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      throw new IllegalArgumentException("usage: Summary RESULTS_JSON RUN_DIR RUN_DIR...");
    }
    List<Run> runs = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      runs.add(Run.load(Path.of(args[i])));
    }
    Map<String, List<Run>> byConfig = new LinkedHashMap<>();
    byConfig.put("sluice", new ArrayList<>());
    byConfig.put("stock", new ArrayList<>());
    runs.forEach(r -> byConfig.get(r.config()).add(r));
    if (byConfig.get("sluice").isEmpty() || byConfig.get("stock").isEmpty()) {
      throw new IllegalArgumentException("the summary needs runs of both configurations, got " + runs.stream()
          .map(Run::name).toList());
    }
    Run first = runs.get(0);
    System.out.println();
    System.out.println("== Feature pipeline: fair summary ==");
    System.out.printf("table: %,d rows (users) from %,d raw events; %.0f float64 features + label + a %d-float"
        + " embedding; %.1f MB in %.0f shards; %.0f epochs%n", (long) first.d("rows"), (long) first.d("events"),
        first.d("features"), HistoryEmbedding.DIMS, first.d("tableBytes") / 1e6, first.d("shards"),
        first.t("epochs"));
    System.out.println("order of runs: " + String.join(" ", runs.stream().map(Run::name).toList()));
    for (var e : byConfig.entrySet()) {
      Run r = e.getValue().get(0);
      System.out.printf("  %s: shuffle manager %s; Flight %s; trainer's path %s%n", e.getKey(),
          r.driver().getProperty("shuffleManager"),
          r.driver().getProperty("flightDataPlane").equals("grpc") ? "plain gRPC" : "READ data plane ("
              + r.driver().getProperty("flightDataPlane") + ")", r.trainer().getProperty("paths"));
    }
    System.out.printf("%n%-46s %-28s %-28s %s%n", "per hop: median [min .. max]", "sluice", "stock", "sluice/stock");
    List<Measurement> medians = new ArrayList<>();
    for (Hop h : HOPS) {
      double[] m = new double[2];
      String[] cells = new String[2];
      int i = 0;
      for (List<Run> rs : byConfig.values()) {
        List<Double> v = rs.stream().map(h.value()::applyAsDouble).toList();
        m[i] = Median.of(v);
        cells[i] = String.format(h.format() + " [" + h.format() + " .. " + h.format() + "] %s", m[i],
            v.stream().mapToDouble(x -> x).min().orElseThrow(), v.stream().mapToDouble(x -> x).max().orElseThrow(),
            h.unit());
        i++;
      }
      System.out.printf("%-46s %-28s %-28s %s%n", h.label(), cells[0], cells[1],
          m[1] == 0 ? "-" : String.format("%.2fx", m[0] / m[1]));
      if (!h.key().equals("pipeline.shuffle_fetch_wait")) {
        medians.add(new Measurement(h.key(), h.unit(), m[0], "stock." + h.key(), m[1]));
      }
    }
    Path out = Path.of(args[0]);
    ResultsFile.write(out, medians);
    System.out.println("medians written to " + out);
    boolean same = runs.stream().allMatch(r -> r.trainer().getProperty("digest").equals(first.trainer()
        .getProperty("digest")));
    List<String> plain = runs.stream().filter(r -> !r.plain().isEmpty()).map(r -> r.plain().getProperty("digest"))
        .toList();
    boolean plainSame = plain.stream().allMatch(d -> d.equals(first.trainer().getProperty("digest")));
    System.out.printf("same features in every run: %s (digest %s); flight-core FlightClient read %s%n",
        same ? "yes" : "NO", first.trainer().getProperty("digest"),
        plain.isEmpty() ? "nothing" : plainSame ? "the same table" : "A DIFFERENT TABLE");
    if (!same || !plainSame) {
      System.exit(1);
    }
  }

  private static Properties props(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file)) {
      p.load(r);
    }
    return p;
  }
}
