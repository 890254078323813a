package io.sluice.perf.spark;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.RdmaShuffleOption;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import picocli.CommandLine.Option;

/**
 * Spark shuffle benchmark: a groupByKey and a sortByKey over generated rows on
 * local-cluster[2,1,1024], under Spark's sort shuffle and under RdmaShuffleManager, alternating
 * (the order flips every round), several rounds each, plain and with Spark's authentication
 * and AES-GCM network encryption on for both managers. In the plain variant RdmaShuffleManager
 * also runs with {@code spark.shuffle.rdma.verifyReads=false} (reducers do not check what they
 * READ against the owner's CRC32C), in the same alternation. Reports the median wall time and
 * fetch wait per variant, job and manager, and the ratio, to perf/results/spark-shuffle.json. Run
 * it through perf/bin/spark-shuffle-bench.
 */
public final class SparkShuffleBench {
  private static final String SORT = "sort";
  private static final String RDMA = "rdma";
  /** RdmaShuffleManager whose reducers do not check READ blocks against their CRC32C. */
  private static final String RDMA_NO_VERIFY = "rdma-noverify";

  private SparkShuffleBench() {}

  /**
   * How both managers run: plain, or with Spark's authentication and AES-GCM network encryption
   * on (Spark's sort shuffle then encrypts its block transfers; RdmaShuffleManager its transport).
   */
  enum Variant {
    PLAIN("", Map.of()),
    ENCRYPTED("encrypted.", Map.of(
        "spark.authenticate", "true",
        "spark.network.crypto.enabled", "true"));

    final String namePart;
    final Map<String, String> conf;

    Variant(String namePart, Map<String, String> conf) {
      this.namePart = namePart;
      this.conf = conf;
    }

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private record Options(long sizeMb, int rounds, Path out, String master, String jar, List<Variant> variants) {
    static final Cli.Command COMMAND = new Cli.Command("spark-shuffle-bench", "spark-shuffle",
        "A groupByKey and a sortByKey under Spark's sort shuffle and RdmaShuffleManager (in the plain variant"
            + " also with spark.shuffle.rdma.verifyReads=false), alternately.",
        "Smoke run: 8 MB per job, one round; writes perf/target/spark-shuffle-quick.json unless --out says"
            + " otherwise (the figures are meaningless).");

    /** The command's own options; {@link #parse} turns them into options. */
    static final class Flags {
      @Option(names = "--size-mb", paramLabel = "N", description = "MiB of rows per job (default 128; 8 with --quick).")
      Long sizeMb;

      @Option(names = "--rounds", paramLabel = "N", description = "Rounds per manager (default 3; 1 with --quick).")
      Integer rounds;

      @Option(names = "--master", paramLabel = "URL", description = "Spark master (default local-cluster[2,1,1024]).")
      String master = "local-cluster[2,1,1024]";

      @Option(names = "--jar", paramLabel = "FILE",
          description = "The shuffle manager's jar (default -Dsluice.spark.jar).")
      String jar = System.getProperty("sluice.spark.jar", "");

      @Option(names = "--variants", split = ",", paramLabel = "LIST",
          description = "plain, encrypted or both (default plain,encrypted; encrypted: spark.authenticate and"
              + " spark.network.crypto.enabled with AES/GCM for both managers).")
      List<String> variants = List.of("plain", "encrypted");
    }

    static Options parse(String[] args) {
      Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
      Flags f = line.options();
      boolean quick = line.quick();
      long sizeMb = f.sizeMb != null ? f.sizeMb : quick ? 8 : 128;
      int rounds = f.rounds != null ? f.rounds : quick ? 1 : 3;
      if (sizeMb <= 0 || rounds <= 0) {
        throw new IllegalArgumentException("--size-mb and --rounds must be positive");
      }
      if (f.jar.isEmpty()) {
        throw new IllegalArgumentException("the shuffle jar is needed (--jar or -Dsluice.spark.jar)");
      }
      List<Variant> variants = new ArrayList<>();
      for (String v : f.variants) {
        try {
          variants.add(Variant.valueOf(v.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("--variants: unknown variant '" + v + "' (plain or encrypted)");
        }
      }
      return new Options(sizeMb, rounds, line.out(), f.master, f.jar, List.copyOf(variants));
    }
  }

  /** One job's figures in one round. */
  private record Sample(double wallSeconds, long fetchWaitMs, long remoteBytes) {}

  public static void main(String[] args) {
    Cli.main("Spark shuffle benchmark", args, Options::parse, o -> {
      run(o);
      return 0;
    });
  }

  /** What starting RdmaShuffleManager's transport cost, per variant: one application per round and manager. */
  private static final StartupFigures STARTUP = new StartupFigures();

  private static void run(Options o) throws IOException, TimeoutException {
    long rows = o.sizeMb() * 1024 * 1024 / BenchJobs.ROW_BYTES;
    Map<String, List<Sample>> samples = new TreeMap<>();
    for (int round = 0; round < o.rounds(); round++) {
      for (Variant variant : o.variants()) {
        List<String> order = new ArrayList<>(managers(variant));
        if (round % 2 == 1) {
          Collections.reverse(order);
        }
        for (String manager : order) {
          runRound(o, variant, manager, rows, samples);
        }
      }
    }
    List<Measurement> results = new ArrayList<>();
    for (Variant variant : o.variants()) {
      for (String job : List.of("groupby", "sort")) {
        results.addAll(figures(o, variant, job, samples));
      }
    }
    if (o.variants().contains(Variant.PLAIN)) {
      for (String job : List.of("groupby", "sort")) {
        results.add(verifyCost(o, job, samples));
      }
    }
    results.addAll(STARTUP.measurements());
    System.out.println();
    System.out.println("RdmaShuffleManager beside Spark's sort shuffle, and with verifyReads beside without:");
    ResultTable.print(System.out, results);
    ResultsFile.write(o.out(), results);
    System.out.println("wrote " + o.out().toAbsolutePath());
  }

  /**
   * The managers a variant runs, in the order of even rounds (odd rounds reverse it): the
   * unchecked RdmaShuffleManager only in the plain variant, since the check is the same CPU pass
   * whatever carried the bytes.
   */
  private static List<String> managers(Variant variant) {
    return variant == Variant.PLAIN ? List.of(SORT, RDMA, RDMA_NO_VERIFY) : List.of(SORT, RDMA);
  }

  /**
   * RdmaShuffleManager's median wall time for one plain job with verifyReads on (the default)
   * against the same with it off: {@code spark_shuffle.<job>.<size>MB.verified_wall} beside {@code
   * spark_shuffle.noverify.<job>.<size>MB.wall}.
   */
  private static Measurement verifyCost(Options o, String job, Map<String, List<Sample>> samples) {
    double checked = Median.of(samples.get(key(Variant.PLAIN, RDMA, job)).stream()
        .mapToDouble(Sample::wallSeconds).toArray());
    double unchecked = Median.of(samples.get(key(Variant.PLAIN, RDMA_NO_VERIFY, job)).stream()
        .mapToDouble(Sample::wallSeconds).toArray());
    return new Measurement("spark_shuffle." + job + "." + o.sizeMb() + "MB.verified_wall", "s", checked,
        "spark_shuffle.noverify." + job + "." + o.sizeMb() + "MB.wall", unchecked);
  }

  /** The medians of one job under one variant, RdmaShuffleManager against the sort shuffle. */
  private static List<Measurement> figures(Options o, Variant variant, String job, Map<String, List<Sample>> samples) {
    List<Sample> rdma = samples.get(key(variant, RDMA, job));
    List<Sample> sort = samples.get(key(variant, SORT, job));
    double rdmaWall = Median.of(rdma.stream().mapToDouble(Sample::wallSeconds).toArray());
    double sortWall = Median.of(sort.stream().mapToDouble(Sample::wallSeconds).toArray());
    double rdmaWait = Median.of(rdma.stream().mapToDouble(Sample::fetchWaitMs).toArray());
    double sortWait = Median.of(sort.stream().mapToDouble(Sample::fetchWaitMs).toArray());
    double rdmaMb = Median.of(rdma.stream().mapToDouble(s -> s.remoteBytes() / 1048576.0).toArray());
    double sortMb = Median.of(sort.stream().mapToDouble(s -> s.remoteBytes() / 1048576.0).toArray());
    String prefix = "spark_shuffle." + variant.namePart + job + "." + o.sizeMb() + "MB";
    String base = "sort_shuffle." + variant.namePart + job + "." + o.sizeMb() + "MB";
    return List.of(
        new Measurement(prefix + ".wall", "s", rdmaWall, base + ".wall", sortWall),
        new Measurement(prefix + ".wall_ratio", "x", rdmaWall / sortWall, base + ".wall_ratio", 1.0),
        new Measurement(prefix + ".fetch_wait", "ms", rdmaWait, base + ".fetch_wait", sortWait),
        new Measurement(prefix + ".remote_read", "MB", rdmaMb, base + ".remote_read", sortMb));
  }

  private static String key(Variant variant, String manager, String job) {
    return variant.label() + "." + manager + "." + job;
  }

  private static void runRound(Options o, Variant variant, String manager, long rows,
      Map<String, List<Sample>> samples) throws TimeoutException {
    SparkConf conf = new SparkConf()
        .setMaster(o.master())
        .setAppName("sluice-shuffle-bench-" + variant.label() + "-" + manager)
        .set("spark.jars", o.jar() + "," + SparkApps.ownJar())
        .set("spark.executor.memory", "768m")
        .set("spark.ui.enabled", "false")
        .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    if (!manager.equals(SORT)) {
      conf.set("spark.shuffle.manager", RdmaShuffleManager.class.getName());
      conf.set(RdmaShuffleOption.VERIFY_READS.key(), String.valueOf(!manager.equals(RDMA_NO_VERIFY)));
    }
    variant.conf.forEach(conf::set);
    if (variant == Variant.ENCRYPTED) {
      conf.set("spark.authenticate.secret", UUID.randomUUID().toString());
    }
    int slices = 8;
    int reducers = 16;
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      SparkApps.awaitExecutors(sc.sc(), 2, 120);
      ShuffleReadTotals totals = new ShuffleReadTotals();
      sc.sc().addSparkListener(totals);
      for (String job : List.of("groupby", "sort")) {
        ShuffleReadTotals.Totals before = totals.snapshot();
        long started = System.nanoTime();
        long check = job.equals("groupby")
            ? BenchJobs.groupBy(sc, rows, slices, reducers)
            : BenchJobs.sort(sc, rows, slices, reducers);
        double seconds = (System.nanoTime() - started) / 1e9;
        long expected = job.equals("groupby") ? rows * (BenchJobs.ROW_BYTES - 8) : rows;
        if (check != expected) {
          throw new IllegalStateException(job + " under " + manager + " returned " + check + ", expected " + expected);
        }
        sc.sc().listenerBus().waitUntilEmpty(30_000);
        ShuffleReadTotals.Totals t = totals.snapshot().minus(before);
        samples.computeIfAbsent(key(variant, manager, job), k -> new ArrayList<>())
            .add(new Sample(seconds, t.fetchWaitMs(), t.remoteBytes()));
        System.out.printf("%-9s %-13s %-8s %7.2f s  fetch wait %6d ms  remote %8.1f MB%n", variant.label(), manager,
            job, seconds, t.fetchWaitMs(), t.remoteBytes() / 1048576.0);
      }
      if (!manager.equals(SORT)) {
        STARTUP.collect(sc, "spark_shuffle." + variant.namePart + "startup");
      }
    }
  }
}
