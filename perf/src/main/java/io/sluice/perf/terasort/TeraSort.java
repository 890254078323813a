package io.sluice.perf.terasort;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.FileTrees;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import io.sluice.perf.cluster.DataPaths;
import io.sluice.perf.cluster.JobAudit;
import io.sluice.perf.spark.SparkApps;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import picocli.CommandLine.Option;
import scala.Tuple2;

/**
 * TeraSort under Spark's sort shuffle and under RdmaShuffleManager in one invocation: for each
 * manager, in a fresh SparkContext, <b>generate</b> the input (100-byte records, {@link
 * TeraRecords}) into files, <b>sort</b> it (read the files, range-partition by key, sort within
 * partitions, write one output file per partition) and <b>validate</b> the output (every file in
 * order, each file's keys below the next file's, and count and checksum equal to the input's).
 * The managers alternate, the order flipping every round. Prints a progress line per step, a
 * table of median phase times, fetch wait and bytes, and writes the shared results file
 * ({@link ResultsFile}) with the sort shuffle as the baseline.
 *
 * <p>Submit it with spark-submit to a cluster with the shuffle manager jar in {@code --jars}; the
 * data folder must be visible to the driver and every executor at the same path (the simulated
 * cluster's hosts share the file system; on a real cluster, a shared mount). {@code perf/bin/terasort}
 * does all of this. Exits with 1 when a validation fails, or with {@code --check} also on a retried
 * stage, a fetch failure, or when RdmaShuffleManager's reducers read through shm or never over tcp.
 */
public final class TeraSort {
  static final String SORT = "sort";
  static final String RDMA = "rdma";
  private static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";
  private static final List<String> PHASES = List.of("generate", "sort", "validate");

  private TeraSort() {}

  record Options(long sizeMb, int maps, int reducers, int rounds, int executors, Path dir, Path out,
      List<String> managers, boolean check) {
    long rows() {
      return sizeMb * 1_000_000L / TeraRecords.RECORD_BYTES;
    }

    static final Cli.Command COMMAND = new Cli.Command("TeraSort", "terasort",
        "Generate, sort and validate 100-byte records under Spark's sort shuffle and RdmaShuffleManager.",
        "Smoke run: 20 MB, results to perf/target/terasort-quick.json unless --out says otherwise (the figures"
            + " are meaningless).");

    /** The command's own options; {@link #parse} turns them into options. */
    static final class Flags {
      @Option(names = "--size-mb", paramLabel = "N",
          description = "Input size in 10^6 bytes (default 256; 20 with --quick).")
      Long sizeMb;

      @Option(names = "--maps", paramLabel = "N",
          description = "Map tasks (default: one per 64 MB, at least 2 per executor).")
      int maps;

      @Option(names = "--reducers", paramLabel = "N",
          description = "Reduce partitions (default: one per 64 MB, at least 2 per executor).")
      int reducers;

      @Option(names = "--rounds", paramLabel = "N", description = "Rounds per manager (default 1).")
      int rounds = 1;

      @Option(names = "--executors", paramLabel = "N", description = "Executors to wait for (default 2).")
      int executors = 2;

      @Option(names = "--dir", paramLabel = "DIR",
          description = "Data folder shared by the driver and every executor (default /tmp/sluice-terasort).")
      Path dir = Path.of("/tmp/sluice-terasort");

      @Option(names = "--managers", split = ",", paramLabel = "LIST", description = "sort, rdma or both (default sort,rdma).")
      List<String> managers = List.of(SORT, RDMA);

      @Option(names = "--check", description = "Also fail on a fetch failure or stage retry, and when"
          + " RdmaShuffleManager's reducers READ through shm or never over tcp.")
      boolean check;
    }

    static Options parse(String[] args) {
      Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
      Flags f = line.options();
      boolean quick = line.quick();
      long sizeMb = f.sizeMb != null ? f.sizeMb : quick ? 20 : 256;
      if (sizeMb <= 0 || f.rounds <= 0 || f.executors <= 0 || f.maps < 0 || f.reducers < 0) {
        throw new IllegalArgumentException("--size-mb, --rounds and --executors must be positive");
      }
      List<String> managers = f.managers.stream().map(String::trim).toList();
      for (String m : managers) {
        if (!m.equals(SORT) && !m.equals(RDMA)) {
          throw new IllegalArgumentException("--managers takes sort and rdma, not " + m);
        }
      }
      int parts = (int) Math.max(2L * f.executors, (sizeMb + 63) / 64);
      return new Options(sizeMb, f.maps > 0 ? f.maps : parts, f.reducers > 0 ? f.reducers : parts, f.rounds,
          f.executors, f.dir, line.out(), managers, f.check);
    }
  }

  /** One manager's figures in one round. */
  record Sample(double[] phaseSeconds, long fetchWaitMs, long remoteBytes, Map<String, Long> readByPath) {}

  /**
   * What validation found in one output file (keys are null for an empty file). A class rather
   * than a record because Spark's Kryo serializer (task results) cannot build records.
   */
  static final class PartSummary implements Serializable {
    private static final long serialVersionUID = 1L;
    final int partition;
    final byte[] firstKey;
    final byte[] lastKey;
    final TeraRecords.Checksum checksum;
    final long outOfOrder;

    PartSummary(int partition, byte[] firstKey, byte[] lastKey, TeraRecords.Checksum checksum, long outOfOrder) {
      this.partition = partition;
      this.firstKey = firstKey;
      this.lastKey = lastKey;
      this.checksum = checksum;
      this.outOfOrder = outOfOrder;
    }
  }

  public static void main(String[] args) {
    Cli.main("TeraSort", args, Options::parse, TeraSort::run);
  }

  /** Runs every round; returns the exit status (1 when an output did not validate or a check failed). */
  static int run(Options o) throws IOException, TimeoutException {
    System.out.printf("[terasort] %d MB (%,d records), %d maps, %d reducers, %d round(s), managers %s, data in %s%n",
        o.sizeMb(), o.rows(), o.maps(), o.reducers(), o.rounds(), o.managers(), o.dir());
    StepProgress progress = new StepProgress(o.rounds() * o.managers().size() * PHASES.size(), System.out);
    Map<String, List<Sample>> samples = new TreeMap<>();
    List<String> failures = new ArrayList<>();
    for (int round = 0; round < o.rounds(); round++) {
      List<String> order = new ArrayList<>(o.managers());
      if (round % 2 == 1) {
        java.util.Collections.reverse(order);
      }
      for (String manager : order) {
        samples.computeIfAbsent(manager, k -> new ArrayList<>()).add(run(o, manager, round, progress, failures));
      }
    }
    List<Measurement> results = report(o, samples);
    if (!results.isEmpty()) {
      ResultsFile.write(o.out(), results);
      System.out.println("wrote " + o.out().toAbsolutePath());
    }
    if (!failures.isEmpty()) {
      failures.forEach(f -> System.out.println("FAILED: " + f));
      return 1;
    }
    System.out.println("[terasort] every output validated");
    return 0;
  }

  private static Sample run(Options o, String manager, int round, StepProgress progress, List<String> failures)
      throws IOException, TimeoutException {
    SparkConf conf = new SparkConf()
        .setAppName("sluice-terasort-" + manager)
        .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    if (manager.equals(RDMA)) {
      conf.set("spark.shuffle.manager", RDMA_MANAGER);
    } else {
      conf.set("spark.shuffle.manager", "sort");
    }
    Path base = o.dir().resolve(manager + "-" + round);
    Path input = base.resolve("input");
    Path output = base.resolve("output");
    FileTrees.delete(base);
    double[] seconds = new double[PHASES.size()];
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      SparkApps.awaitExecutors(sc.sc(), o.executors(), 180);
      JobAudit audit = new JobAudit();
      sc.sc().addSparkListener(audit);
      String label = manager + " round " + (round + 1);

      progress.start(label + " generate");
      long rows = o.rows();
      int maps = o.maps();
      String in = input.toString();
      TeraRecords.Checksum inputSum = sc.parallelize(IntStream.range(0, maps).boxed().toList(), maps)
          .map(p -> TeraRecords.writeRange(Path.of(in, part(p)), p * rows / maps, (p + 1) * rows / maps))
          .reduce(TeraRecords.Checksum::plus);
      seconds[0] = progress.finish(String.format("%,d records", inputSum.count()));

      progress.start(label + " sort");
      sc.sc().listenerBus().waitUntilEmpty(30_000);
      JobAudit.Totals before = audit.snapshot();
      String out = output.toString();
      long written = sc.parallelize(IntStream.range(0, maps).boxed().toList(), maps)
          .flatMapToPair(p -> pairs(TeraRecords.read(Path.of(in, part(p)))))
          .repartitionAndSortWithinPartitions(new KeyRangePartitioner(o.reducers()), new KeyOrder())
          .mapPartitionsWithIndex((p, records) -> List.of(writePart(Path.of(out, part(p)), records)).iterator(), true)
          .reduce(Long::sum);
      seconds[1] = progress.finish(String.format("%,d records", written));
      sc.sc().listenerBus().waitUntilEmpty(30_000);
      JobAudit.Totals sort = audit.snapshot().minus(before);
      Map<String, Long> paths = DataPaths.total(DataPaths.collect(sc, o.executors()));

      progress.start(label + " validate");
      int reducers = o.reducers();
      List<PartSummary> parts = new ArrayList<>(sc.parallelize(IntStream.range(0, reducers).boxed().toList(), reducers)
          .map(p -> summarize(p, Path.of(out, part(p))))
          .collect());
      List<String> problems = validate(parts, inputSum);
      seconds[2] = progress.finish(problems.isEmpty() ? "valid" : "INVALID: " + problems);
      problems.forEach(p -> failures.add(manager + " round " + (round + 1) + ": " + p));

      System.out.printf("[terasort] %s: sort read %.1f MB remote, fetch wait %d ms%s%s%n", manager,
          sort.remoteBytes() / 1e6, sort.fetchWaitMs(), paths.isEmpty() ? "" : ", READ per path " + paths,
          sort.stageRetries() + sort.fetchFailures() == 0 ? ""
              : ", " + sort.fetchFailures() + " fetch failures, retried " + sort.retriedStages());
      if (o.check()) {
        JobAudit.Totals all = audit.snapshot();
        if (all.stageRetries() > 0 || all.fetchFailures() > 0) {
          failures.add(manager + ": " + all.fetchFailures() + " fetch failures, retried stages " + all.retriedStages());
        }
        if (manager.equals(RDMA) && (paths.getOrDefault("tcp", 0L) == 0 || paths.getOrDefault("shm", 0L) != 0)) {
          failures.add("rdma: reducers should READ between hosts over tcp and never through shm; READ " + paths);
        }
      }
      return new Sample(seconds, sort.fetchWaitMs(), sort.remoteBytes(), paths);
    } finally {
      FileTrees.delete(base);
    }
  }

  static String part(int p) {
    return String.format("part-%05d", p);
  }

  private static Iterator<Tuple2<byte[], byte[]>> pairs(Iterator<byte[][]> records) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return records.hasNext();
      }

      @Override
      public Tuple2<byte[], byte[]> next() {
        byte[][] r = records.next();
        return new Tuple2<>(r[0], r[1]);
      }
    };
  }

  private static long writePart(Path file, Iterator<Tuple2<byte[], byte[]>> records) throws IOException {
    long n = 0;
    try (TeraRecords.Writer w = new TeraRecords.Writer(file)) {
      while (records.hasNext()) {
        Tuple2<byte[], byte[]> r = records.next();
        w.write(r._1(), r._2());
        n++;
      }
    }
    return n;
  }

  /** One output file's first and last key, checksum, and how many neighbours are out of order. */
  static PartSummary summarize(int partition, Path file) throws IOException {
    TeraRecords.Checksum sum = TeraRecords.Checksum.EMPTY;
    byte[] first = null;
    byte[] previous = null;
    long outOfOrder = 0;
    if (!Files.exists(file)) {
      return new PartSummary(partition, null, null, sum, 0);
    }
    Iterator<byte[][]> records = TeraRecords.read(file);
    while (records.hasNext()) {
      byte[][] r = records.next();
      if (first == null) {
        first = r[0];
      } else if (TeraRecords.compareKeys(previous, r[0]) > 0) {
        outOfOrder++;
      }
      previous = r[0];
      sum = sum.plus(r[0], r[1]);
    }
    return new PartSummary(partition, first, previous, sum, outOfOrder);
  }

  /** Global order across files and equality with the input's checksum; the problems found. */
  static List<String> validate(List<PartSummary> parts, TeraRecords.Checksum input) {
    List<String> problems = new ArrayList<>();
    parts.sort(Comparator.comparingInt(s -> s.partition));
    TeraRecords.Checksum total = TeraRecords.Checksum.EMPTY;
    byte[] lastKey = null;
    int lastPart = -1;
    for (PartSummary s : parts) {
      total = total.plus(s.checksum);
      if (s.outOfOrder > 0) {
        problems.add("part " + s.partition + " has " + s.outOfOrder + " keys out of order");
      }
      if (s.firstKey == null) {
        continue;
      }
      if (lastKey != null && TeraRecords.compareKeys(lastKey, s.firstKey) > 0) {
        problems.add("part " + lastPart + " ends above the start of part " + s.partition);
      }
      lastKey = s.lastKey;
      lastPart = s.partition;
    }
    if (!total.equals(input)) {
      problems.add("output has " + total + "; input " + input);
    }
    return problems;
  }

  private static List<Measurement> report(Options o, Map<String, List<Sample>> samples) {
    List<Sample> rdma = samples.get(RDMA);
    List<Sample> sort = samples.get(SORT);
    if (rdma == null || sort == null) {
      System.out.println("[terasort] one manager only: no comparison written");
      return List.of();
    }
    String size = o.sizeMb() + "MB";
    String prefix = "spark_shuffle.terasort." + size;
    String base = "sort_shuffle.terasort." + size;
    List<Measurement> results = new ArrayList<>();
    double rdmaTotal = 0;
    double sortTotal = 0;
    for (int i = 0; i < PHASES.size(); i++) {
      int phase = i;
      double r = Median.of(rdma.stream().mapToDouble(s -> s.phaseSeconds()[phase]).toArray());
      double s = Median.of(sort.stream().mapToDouble(x -> x.phaseSeconds()[phase]).toArray());
      results.add(new Measurement(prefix + "." + PHASES.get(i), "s", r, base + "." + PHASES.get(i), s));
      rdmaTotal += r;
      sortTotal += s;
    }
    double rdmaSort = results.get(1).value();
    double sortSort = results.get(1).baselineValue();
    double rdmaWait = Median.of(rdma.stream().mapToDouble(Sample::fetchWaitMs).toArray());
    double sortWait = Median.of(sort.stream().mapToDouble(Sample::fetchWaitMs).toArray());
    double rdmaMb = Median.of(rdma.stream().mapToDouble(s -> s.remoteBytes() / 1e6).toArray());
    double sortMb = Median.of(sort.stream().mapToDouble(s -> s.remoteBytes() / 1e6).toArray());
    double tcpMb = Median.of(rdma.stream().mapToDouble(s -> s.readByPath().getOrDefault("tcp", 0L) / 1e6).toArray());
    double shmMb = Median.of(rdma.stream().mapToDouble(s -> s.readByPath().getOrDefault("shm", 0L) / 1e6).toArray());
    results.add(new Measurement(prefix + ".total", "s", rdmaTotal, base + ".total", sortTotal));
    results.add(new Measurement(prefix + ".sort_ratio", "x", rdmaSort / sortSort, base + ".sort_ratio", 1.0));
    results.add(new Measurement(prefix + ".fetch_wait", "ms", rdmaWait, base + ".fetch_wait", sortWait));
    results.add(new Measurement(prefix + ".fetch_wait_ratio", "x", sortWait == 0 ? (rdmaWait == 0 ? 1 : rdmaWait)
        : rdmaWait / sortWait, base + ".fetch_wait_ratio", 1.0));
    results.add(new Measurement(prefix + ".remote_read", "MB", rdmaMb, base + ".remote_read", sortMb));
    results.add(new Measurement(prefix + ".read_via_tcp", "MB", tcpMb, base + ".remote_read", sortMb));
    results.add(new Measurement(prefix + ".read_via_shm", "MB", shmMb, base + ".remote_read", sortMb));

    System.out.println();
    System.out.println("RdmaShuffleManager beside Spark's sort shuffle (medians over rounds):");
    ResultTable.print(System.out, results);
    System.out.printf("%nper round, sort phase (s):  rdma %s  sort %s%n",
        Arrays.toString(rdma.stream().mapToDouble(s -> round1(s.phaseSeconds()[1])).toArray()),
        Arrays.toString(sort.stream().mapToDouble(s -> round1(s.phaseSeconds()[1])).toArray()));
    return results;
  }

  private static double round1(double v) {
    return Math.round(v * 10) / 10.0;
  }
}
