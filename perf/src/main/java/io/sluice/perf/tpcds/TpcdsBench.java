package io.sluice.perf.tpcds;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.FileTrees;
import io.sluice.perf.bench.ResultsFile;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * TPC-DS under Spark's sort shuffle and under RdmaShuffleManager in one invocation. A shuffle
 * manager is fixed for the life of a SparkContext, so each manager gets its own driver
 * application, submitted through {@code SparkSubmit} exactly as {@code spark-submit} would with the
 * same jars and settings but {@code spark.shuffle.manager}. Only one application is alive while
 * queries are timed: the queries run in batches ({@code --batch}); for each batch one manager's
 * application starts, runs the batch's queries one at a time and stops, then the other manager's
 * application does the same with the same queries. Which manager goes first flips from batch to
 * batch, so neither always runs on a freshly started application or second. The next application
 * starts while the last one shuts down, and its first query waits until every process of the last
 * one has exited. Each query's rows are compared ({@link ResultRows}); wall time, fetch wait and
 * shuffle bytes go to the results file ({@link TpcdsReport}). Data is generated on the first run at
 * a scale factor and cached ({@link TpcdsCache}). Run it through {@code perf/bin/tpcds}.
 */
public final class TpcdsBench {
  private static final String SORT = "sort";
  private static final String RDMA = "rdma";
  private static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(10);

  private final TpcdsOptions options;
  private final List<String> queries;
  private final List<DriverProcess> live = new CopyOnWriteArrayList<>();
  /** The longest an application took to start so far, in seconds. */
  private double slowestStartSeconds;
  /** The command's start: the budget counts from here. */
  private final long runStarted = System.nanoTime();

  private TpcdsBench(TpcdsOptions options, List<String> queries) {
    this.options = options;
    this.queries = List.copyOf(queries);
  }

  public static void main(String[] args) {
    Cli.main("TPC-DS benchmark", args, TpcdsBench::parse, bench -> {
      Runtime.getRuntime().addShutdownHook(new Thread(() -> bench.live.forEach(DriverProcess::kill)));
      return bench.run(bench.queries);
    });
  }

  /** The run the command line asks for; bad options and unknown queries are refused here, before anything starts. */
  private static TpcdsBench parse(String[] args) {
    TpcdsOptions o = TpcdsOptions.parse(args, System.getenv(), System.getProperty("sluice.spark.jar"));
    return new TpcdsBench(o, TpcdsQueries.select(o.queries(), TpcdsQueries.all()));
  }

  private int run(List<String> queries) throws IOException, InterruptedException {
    long started = runStarted;
    Path data = TpcdsCache.folder(options.dataRoot(), options.scale()).toAbsolutePath();
    Path work = options.workDir().toAbsolutePath();
    FileTrees.delete(work.resolve("rows"));
    Files.createDirectories(work.resolve("logs"));
    System.out.printf(Locale.ROOT, "TPC-DS at scale factor %s on %s: %d queries, each under the sort shuffle and"
        + " RdmaShuffleManager, in batches of %d, one application alive at a time%n",
        TpcdsReport.scaleName(options.scale()).substring(2), options.master(), queries.size(), options.batch());
    double generationSeconds = 0;
    if (TpcdsCache.complete(data)) {
      System.out.println("data: " + data + " (cached)");
    } else {
      System.out.println("data: generating all 24 tables into " + data + " ...");
      generationSeconds = generate(data, work);
      System.out.printf(Locale.ROOT, "data: generated in %.0f s%n", generationSeconds);
    }
    System.out.printf(Locale.ROOT, "data: %.0f MB read once, so that the first application does not find the"
        + " files colder than the others do%n", readOnce(data) / 1e6);

    List<QueryOutcome> outcomes = new ArrayList<>();
    String budgetNote = "";
    String abort = null;
    DriverProcess current = null;
    List<List<String>> batches = batches(queries, options.batch());
    try {
      int done = 0;
      long queriesStarted = System.nanoTime();
      for (int b = 0; b < batches.size(); b++) {
        List<String> batch = batches.get(b);
        boolean rdmaFirst = b % 2 == 1;
        String firstName = rdmaFirst ? RDMA : SORT;
        String secondName = rdmaFirst ? SORT : RDMA;
        // A batch starts only if its first query could: the first half's queries start while the
        // budget leaves room for the second application to repeat them, and its start takes as
        // long as the slowest start seen.
        if (budgetSpent(2 * slowestStartSeconds)) {
          budgetNote = budgetNote(done, queries);
          System.out.println(budgetNote);
          break;
        }
        long batchStarted = System.nanoTime();
        current = switchTo(current, firstName, data, work, b);
        Map<String, QueryAnswer> first = new LinkedHashMap<>();
        for (String q : batch) {
          // The second application repeats what the first one ran, in about the same time.
          if (budgetSpent(since(batchStarted))) {
            break;
          }
          first.put(q, runOne(current, q));
          System.out.println(halfLine(firstName, q, first.get(q)));
        }
        if (first.size() < batch.size()) {
          budgetNote = budgetNote(done + first.size(), queries);
        }
        if (first.isEmpty()) {
          System.out.println(budgetNote);
          break;
        }
        current = switchTo(current, secondName, data, work, b);
        for (Map.Entry<String, QueryAnswer> e : first.entrySet()) {
          String q = e.getKey();
          QueryAnswer second = runOne(current, q);
          QueryOutcome outcome = outcome(q, rdmaFirst ? second : e.getValue(), rdmaFirst ? e.getValue() : second,
              rdmaFirst, work);
          outcomes.add(outcome);
          done++;
          System.out.println(progressLine(done, queries.size(), outcome, since(started),
              Progress.eta(since(queriesStarted), done, queries.size())));
        }
        if (!budgetNote.isEmpty()) {
          System.out.println(budgetNote);
          break;
        }
      }
    } catch (DriverProcess.DriverException e) {
      abort = e.getMessage();
      System.out.println("aborted: " + abort);
    } finally {
      if (current != null) {
        current.close();
      }
      live.clear();
    }

    if (abort != null) {
      budgetNote = (budgetNote.isEmpty() ? "" : budgetNote + "; ") + "the run was aborted: " + abort;
    }
    TpcdsReport.RunInfo info = new TpcdsReport.RunInfo(options.scale(), options.master(),
        options.shufflePartitions(), queries.size(), budgetNote, generationSeconds, since(started));
    ResultsFile.write(options.out(), TpcdsReport.measurements(info, outcomes));
    Path md = options.markdown().toAbsolutePath();
    Files.createDirectories(md.getParent());
    Files.writeString(md, TpcdsReport.markdown(info, outcomes), StandardCharsets.UTF_8);
    printSummary(outcomes);
    System.out.println("wrote " + options.out().toAbsolutePath() + " and " + md);
    TpcdsReport.Totals t = TpcdsReport.totals(outcomes);
    boolean failed = outcomes.stream().anyMatch(o -> o.error().isPresent());
    return abort != null || failed || t.differences() > 0 ? 1 : 0;
  }

  /** One query's answer from one application: its figures, or why it failed. */
  private record QueryAnswer(Optional<QueryRun> run, Optional<String> error) {}

  private QueryAnswer runOne(DriverProcess d, String q) throws DriverProcess.DriverException, InterruptedException {
    d.send("run " + q);
    String answer = d.await(Duration.ofSeconds(options.queryTimeoutSeconds()));
    if (answer.startsWith("done " + q + " ")) {
      return new QueryAnswer(Optional.of(QueryRun.parse(answer)), Optional.empty());
    }
    return new QueryAnswer(Optional.empty(), Optional.of(d.name() + ": " + answer.replaceFirst("^failed \\S+ ", "")));
  }

  private static QueryOutcome outcome(String q, QueryAnswer sort, QueryAnswer rdma, boolean rdmaFirst, Path work)
      throws IOException {
    Optional<String> difference = Optional.empty();
    if (sort.run().isPresent() && rdma.run().isPresent()) {
      List<String> expected = Files.readAllLines(work.resolve("rows").resolve(SORT).resolve(q + ".rows"));
      List<String> actual = Files.readAllLines(work.resolve("rows").resolve(RDMA).resolve(q + ".rows"));
      difference = ResultRows.difference(expected, actual);
    }
    List<String> errors = new ArrayList<>();
    sort.error().ifPresent(errors::add);
    rdma.error().ifPresent(errors::add);
    return new QueryOutcome(q, sort.run(), rdma.run(), difference,
        errors.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", errors)), rdmaFirst);
  }

  /**
   * Starts the application of {@code name} for batch {@code batch}, stops {@code last} (whose
   * shutdown overlaps the new one's start-up, when nothing is timed) and returns the new one once
   * it is ready and every process of {@code last} has exited.
   */
  private DriverProcess switchTo(DriverProcess last, String name, Path data, Path work, int batch)
      throws IOException, InterruptedException {
    long switching = System.nanoTime();
    DriverProcess next = startDriver(name, name + "-" + (batch + 1), List.of("serve", "--data", data.toString(),
        "--rows", work.resolve("rows").resolve(name).toString(), "--executors", String.valueOf(options.executors())));
    if (last != null) {
      last.close();
      live.remove(last);
    }
    expect(next, "ready", START_TIMEOUT);
    slowestStartSeconds = Math.max(slowestStartSeconds, since(switching));
    System.out.printf(Locale.ROOT, "batch %d: %s application ready after %s%n", batch + 1, name,
        Progress.duration(since(switching)));
    return next;
  }

  /**
   * Reads every file below {@code folder} once and returns the bytes read: the tables then sit in
   * the page cache (where memory allows) before any application is timed, not only after the first
   * one has read them.
   */
  static long readOnce(Path folder) throws IOException {
    long bytes = 0;
    byte[] buffer = new byte[1 << 20];
    try (var files = Files.walk(folder)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        try (var in = Files.newInputStream(f)) {
          for (int n; (n = in.read(buffer)) > 0; ) {
            bytes += n;
          }
        }
      }
    }
    return bytes;
  }

  /** The queries in batches of {@code size}, in order. */
  static List<List<String>> batches(List<String> queries, int size) {
    List<List<String>> batches = new ArrayList<>();
    for (int i = 0; i < queries.size(); i += size) {
      batches.add(List.copyOf(queries.subList(i, Math.min(queries.size(), i + size))));
    }
    return batches;
  }

  /** Whether the budget would be used up {@code aheadSeconds} from now (never without a budget). */
  private boolean budgetSpent(double aheadSeconds) {
    return options.budgetMinutes() > 0 && (since(runStarted) + aheadSeconds) / 60 >= options.budgetMinutes();
  }

  private String budgetNote(int started, List<String> queries) {
    return String.format(Locale.ROOT, "the time budget of %s min was used up after %d of %d queries;"
        + " not compared: %s", trim(options.budgetMinutes()), started, queries.size(),
        String.join(",", queries.subList(started, queries.size())));
  }

  static String halfLine(String name, String q, QueryAnswer a) {
    return String.format(Locale.ROOT, "        %-5s %s %s", q, name, a.run()
        .map(r -> String.format(Locale.ROOT, "%6.2f s", r.wallSeconds())).orElse("FAILED " + a.error().orElse("")));
  }

  static String progressLine(int k, int n, QueryOutcome o, double elapsed, double eta) {
    String figures;
    if (o.measured()) {
      figures = String.format(Locale.ROOT, "sort %6.2f s  rdma %6.2f s  %5.2fx  fetch wait %5d / %5d ms  %s",
          o.sort().orElseThrow().wallSeconds(), o.rdma().orElseThrow().wallSeconds(), o.ratio(),
          o.sort().orElseThrow().fetchWaitMs(), o.rdma().orElseThrow().fetchWaitMs(),
          o.difference().isPresent() ? "RESULTS DIFFER" : "equal");
    } else {
      figures = "FAILED " + o.error().orElse("");
    }
    return String.format(Locale.ROOT, "[%3d/%d] %-5s %s  elapsed %s  ETA %s", k, n, o.query(), figures,
        Progress.duration(elapsed), Progress.duration(eta));
  }

  private void printSummary(List<QueryOutcome> outcomes) {
    TpcdsReport.Totals t = TpcdsReport.totals(outcomes);
    System.out.println();
    if (t.measured() == 0) {
      System.out.println("no query ran under both managers");
      return;
    }
    System.out.printf(Locale.ROOT, "total: rdma %.1f s, sort %.1f s: %.2fx%n", t.rdmaWall(), t.sortWall(),
        t.rdmaWall() / t.sortWall());
    System.out.printf(Locale.ROOT, "worst query: %s at %.2fx; %d above %.1fx%n", t.worstQuery(), t.worstRatio(),
        t.slowerThanNoted(), TpcdsReport.SLOW_QUERY_RATIO);
    System.out.println("per-query ratio, min / median / max: "
        + TpcdsReport.ratioSpread(outcomes).orElseThrow().format("%.2f"));
    TpcdsReport.orderLines(outcomes).forEach(System.out::println);
    System.out.printf(Locale.ROOT, "fetch wait: rdma %d ms, sort %d ms: %.2fx%n", t.rdmaWait(), t.sortWait(),
        TpcdsReport.ratio(t.rdmaWait(), t.sortWait()));
    System.out.printf(Locale.ROOT, "result differences: %d of %d queries%n", t.differences(), t.measured());
    for (QueryOutcome o : outcomes) {
      o.difference().ifPresent(d -> System.out.println("  " + o.query() + ": " + d));
      o.error().ifPresent(e -> System.out.println("  " + o.query() + " failed: " + e));
    }
  }

  private double generate(Path data, Path work) throws IOException, InterruptedException {
    long started = System.nanoTime();
    DriverProcess gen = startDriver("generate", "generate", List.of("generate", "--sf", String.valueOf(options.scale()),
        "--data", data.toString(), "--executors", String.valueOf(options.executors())));
    try {
      Duration timeout = Duration.ofMinutes(Math.max(30, (long) Math.ceil(options.scale() * 60)));
      expect(gen, "generated", timeout);
    } finally {
      gen.close();
      live.remove(gen);
    }
    if (!TpcdsCache.complete(data)) {
      throw new IllegalStateException("data generation ended without completing " + data);
    }
    return since(started);
  }

  private static void expect(DriverProcess d, String word, Duration timeout)
      throws DriverProcess.DriverException, InterruptedException {
    String answer = d.await(timeout);
    if (!answer.startsWith(word)) {
      throw new DriverProcess.DriverException(d.name() + " driver answered \"" + answer + "\", expected " + word);
    }
  }

  /**
   * Starts one driver application through SparkSubmit; {@code name} is also its shuffle manager,
   * {@code logName} names its log file.
   */
  private DriverProcess startDriver(String name, String logName, List<String> programArgs) throws IOException {
    String sparkHome = System.getenv("SPARK_HOME");
    if (sparkHome == null || sparkHome.isBlank()) {
      throw new IllegalStateException("SPARK_HOME is not set");
    }
    String perfJar = jarOf(TpcdsBench.class.getName().replace('.', '/') + ".class");
    String tpcdsJar = jarOf("io/trino/tpcds/Table.class");
    String queriesJar = jarOf("tpcds/q1.sql");
    String shuffleJar = Path.of(options.shuffleJar()).toAbsolutePath().toString();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String opt : System.getProperty("sluice.driver.javaOptions", "").trim().split("\\s+")) {
      if (!opt.isEmpty()) {
        cmd.add(opt);
      }
    }
    // Broadcast joins are built on the driver: customer_demographics has 1.9 million rows at any
    // scale factor, more than a 1 GiB heap builds reliably (q10, q69).
    cmd.add("-Xmx2g");
    cmd.add("-cp");
    cmd.add(String.join(":", sparkHome + "/jars/*", perfJar, shuffleJar, tpcdsJar, queriesJar));
    cmd.add("org.apache.spark.deploy.SparkSubmit");
    cmd.addAll(List.of("--master", options.master(), "--name", "sluice-tpcds-" + name));
    List<String> conf = new ArrayList<>(List.of("spark.executor.memory=" + options.executorMemory(),
        "spark.ui.enabled=false", "spark.sql.shuffle.partitions=" + options.shufflePartitions(),
        "spark.sql.warehouse.dir=" + options.workDir().toAbsolutePath().resolve("warehouse"),
        // The TPC-DS queries assume SQL's non-ANSI semantics, which Spark 4 no longer defaults to:
        // q90 divides by a count that is 0 at small scale factors (NULL, not an error).
        "spark.sql.ansi.enabled=false"));
    if (name.equals(RDMA)) {
      conf.add("spark.shuffle.manager=" + RDMA_MANAGER);
    }
    conf.addAll(options.sparkConf());
    if (options.standalone()) {
      conf.add("spark.executor.cores=1");
      conf.add("spark.cores.max=" + options.executors());
    }
    for (String c : conf) {
      cmd.add("--conf");
      cmd.add(c);
    }
    cmd.addAll(List.of("--jars", shuffleJar + "," + tpcdsJar, "--class", TpcdsDriver.class.getName(), perfJar));
    cmd.addAll(programArgs);
    Path log = options.workDir().toAbsolutePath().resolve("logs").resolve(logName + ".log");
    DriverProcess d = DriverProcess.start(name, cmd, Map.of("SPARK_HOME", sparkHome, "SPARK_SCALA_VERSION", "2.13"),
        log);
    live.add(d);
    System.out.println(name + " application starting; log: " + log);
    return d;
  }

  /** The jar (or class folder) on this JVM's class path that holds {@code resource}. */
  static String jarOf(String resource) {
    URL url = TpcdsBench.class.getClassLoader().getResource(resource);
    if (url == null) {
      throw new IllegalStateException(resource + " is not on the class path");
    }
    try {
      String s = url.toString();
      if (s.startsWith("jar:")) {
        return Path.of(new java.net.URI(s.substring(4, s.indexOf("!/")))).toString();
      }
      Path file = Path.of(url.toURI());
      Path root = file;
      for (int i = 0; i < resource.split("/").length; i++) {
        root = root.getParent();
      }
      return root.toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot tell where " + resource + " comes from: " + url, e);
    }
  }

  private static double since(long nanoTime) {
    return (System.nanoTime() - nanoTime) / 1e9;
  }

  private static String trim(double v) {
    return v == Math.rint(v) ? String.valueOf((long) v) : String.valueOf(v);
  }
}
