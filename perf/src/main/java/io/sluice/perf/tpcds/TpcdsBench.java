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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * TPC-DS under Spark's sort shuffle and under RdmaShuffleManager in one invocation. A shuffle
 * manager is fixed for the life of a SparkContext, so this orchestrator keeps two driver
 * applications alive, one per manager, each submitted through {@code SparkSubmit} exactly as
 * {@code spark-submit} would with the same jars and settings but {@code spark.shuffle.manager}. It
 * runs the queries one at a time, alternating between the two, and swaps which goes first every
 * query so neither gains from running second (warm caches, a quieter machine). Each query's rows
 * are compared ({@link ResultRows}); wall time, fetch wait and shuffle bytes go to the results
 * file ({@link TpcdsReport}). Data is generated on the first run at a scale factor and cached
 * ({@link TpcdsCache}). Run it through {@code perf/bin/tpcds}.
 */
public final class TpcdsBench {
  private static final String SORT = "sort";
  private static final String RDMA = "rdma";
  private static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";
  private static final Duration START_TIMEOUT = Duration.ofMinutes(10);

  private final TpcdsOptions options;
  private final List<String> queries;
  private final List<DriverProcess> live = new CopyOnWriteArrayList<>();

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
    long started = System.nanoTime();
    Path data = TpcdsCache.folder(options.dataRoot(), options.scale()).toAbsolutePath();
    Path work = options.workDir().toAbsolutePath();
    FileTrees.delete(work.resolve("rows"));
    Files.createDirectories(work.resolve("logs"));
    System.out.printf(Locale.ROOT, "TPC-DS at scale factor %s on %s: %d queries, each under the sort shuffle and"
        + " RdmaShuffleManager%n", TpcdsReport.scaleName(options.scale()).substring(2), options.master(),
        queries.size());
    double generationSeconds = 0;
    if (TpcdsCache.complete(data)) {
      System.out.println("data: " + data + " (cached)");
    } else {
      System.out.println("data: generating all 24 tables into " + data + " ...");
      generationSeconds = generate(data, work);
      System.out.printf(Locale.ROOT, "data: generated in %.0f s%n", generationSeconds);
    }

    List<QueryOutcome> outcomes = new ArrayList<>();
    String budgetNote = "";
    String abort = null;
    DriverProcess sort = null;
    DriverProcess rdma = null;
    try {
      sort = startDriver(SORT, List.of("serve", "--data", data.toString(), "--rows",
          work.resolve("rows").resolve(SORT).toString(), "--executors", String.valueOf(options.executors())));
      rdma = startDriver(RDMA, List.of("serve", "--data", data.toString(), "--rows",
          work.resolve("rows").resolve(RDMA).toString(), "--executors", String.valueOf(options.executors())));
      expect(sort, "ready", START_TIMEOUT);
      expect(rdma, "ready", START_TIMEOUT);
      System.out.printf(Locale.ROOT, "both applications ready after %s%n", Progress.duration(since(started)));
      long queriesStarted = System.nanoTime();
      for (int k = 0; k < queries.size(); k++) {
        double elapsedMin = since(started) / 60;
        if (options.budgetMinutes() > 0 && elapsedMin >= options.budgetMinutes()) {
          budgetNote = String.format(Locale.ROOT, "the time budget of %s min was used up after %d of %d queries;"
              + " not started: %s", trim(options.budgetMinutes()), k, queries.size(),
              String.join(",", queries.subList(k, queries.size())));
          System.out.println(budgetNote);
          break;
        }
        String q = queries.get(k);
        boolean rdmaFirst = k % 2 == 1;
        QueryOutcome outcome = runQuery(q, rdmaFirst ? rdma : sort, rdmaFirst ? sort : rdma, rdmaFirst, work);
        outcomes.add(outcome);
        double soFar = since(queriesStarted);
        System.out.println(progressLine(k + 1, queries.size(), outcome, since(started),
            Progress.eta(soFar, k + 1, queries.size())));
      }
    } catch (DriverProcess.DriverException e) {
      abort = e.getMessage();
      System.out.println("aborted: " + abort);
    } finally {
      closeAll(sort, rdma);
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

  private QueryOutcome runQuery(String q, DriverProcess first, DriverProcess second, boolean rdmaFirst, Path work)
      throws DriverProcess.DriverException, InterruptedException, IOException {
    Duration timeout = Duration.ofSeconds(options.queryTimeoutSeconds());
    Optional<QueryRun>[] runs = new Optional[2];
    List<String> errors = new ArrayList<>();
    DriverProcess[] order = {first, second};
    for (int i = 0; i < 2; i++) {
      DriverProcess d = order[i];
      d.send("run " + q);
      String answer = d.await(timeout);
      if (answer.startsWith("done " + q + " ")) {
        runs[i] = Optional.of(QueryRun.parse(answer));
      } else {
        runs[i] = Optional.empty();
        errors.add(d.name() + ": " + answer.replaceFirst("^failed \\S+ ", ""));
      }
    }
    Optional<QueryRun> sortRun = rdmaFirst ? runs[1] : runs[0];
    Optional<QueryRun> rdmaRun = rdmaFirst ? runs[0] : runs[1];
    Optional<String> difference = Optional.empty();
    if (sortRun.isPresent() && rdmaRun.isPresent()) {
      List<String> expected = Files.readAllLines(work.resolve("rows").resolve(SORT).resolve(q + ".rows"));
      List<String> actual = Files.readAllLines(work.resolve("rows").resolve(RDMA).resolve(q + ".rows"));
      difference = ResultRows.difference(expected, actual);
    }
    return new QueryOutcome(q, sortRun, rdmaRun, difference,
        errors.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", errors)), rdmaFirst);
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
    DriverProcess gen = startDriver("generate", List.of("generate", "--sf", String.valueOf(options.scale()),
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

  /** Starts one driver application through SparkSubmit; {@code name} is also its shuffle manager. */
  private DriverProcess startDriver(String name, List<String> programArgs) throws IOException {
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
    Path log = options.workDir().toAbsolutePath().resolve("logs").resolve(name + ".log");
    DriverProcess d = DriverProcess.start(name, cmd, Map.of("SPARK_HOME", sparkHome, "SPARK_SCALA_VERSION", "2.13"),
        log);
    live.add(d);
    System.out.println(name + " application starting; log: " + log);
    return d;
  }

  private void closeAll(DriverProcess... drivers) throws InterruptedException {
    List<Thread> closing = new ArrayList<>();
    for (DriverProcess d : drivers) {
      if (d != null) {
        Thread t = new Thread(d::close, "close-" + d.name());
        t.start();
        closing.add(t);
      }
    }
    for (Thread t : closing) {
      t.join(Duration.ofSeconds(90).toMillis());
    }
    live.clear();
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
