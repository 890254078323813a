package io.sluice.perf.scale;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import io.sluice.perf.spark.ExecutorThreads;
import io.sluice.perf.spark.SparkApps;
import io.sluice.spark.shuffle.TransportReport;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import picocli.CommandLine.Option;

/**
 * How each executor's resources grow with the number of executors N, under RdmaShuffleManager and
 * under Spark's sort shuffle: for each N, one application per manager and round (the managers
 * alternating, the first one flipping from N to N and round to round) with N one-core executors
 * runs an all-to-all shuffle of tiny data ({@link AllToAllJob}) twice, cold and warm. While the
 * jobs run, a sampler ({@link ProcSampler}) reads every executor JVM's {@code /proc} entries (file
 * descriptors, sockets, established TCP connections and which peer each goes to, threads,
 * resident and locked memory) and the driver's (this JVM: threads, sockets, heap). After the jobs
 * it reads RdmaShuffleManager's own counts on every executor (connections, handshakes, registered
 * memory: the {@code sluice} metrics source; open and first-connection times: {@link
 * TransportReport}). Prints a line per application and a table, RdmaShuffleManager beside the sort
 * shuffle, and writes the results file ({@link ScaleFigures#measurements}).
 *
 * <p>Submit it with spark-submit to a standalone cluster whose Workers offer at least the largest
 * N cores and N times the executor memory; {@code perf/bin/scale-bench} brings up the simulated
 * cluster (testing/cluster/spark-cluster) and does this. The driver must be able to read the
 * executors' {@code /proc} entries (root on the simulated cluster).
 */
public final class ScaleBench {
  private static final String RDMA_MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";

  private ScaleBench() {}

  record Options(List<Integer> executors, int rounds, int partitionsPerExecutor, int rowsPerBlock, int valueBytes,
      String executorMemory, int startTimeoutS, int jobTimeoutS, long sampleMs, int maxPeerConnections,
      List<String> boundedManagers, Map<String, String> rdmaConf, String executorJavaOptions, Path out) {
    static final Cli.Command COMMAND = new Cli.Command("scale-bench", "scale",
        "Per-executor connections, sockets, file descriptors, threads and memory as the number of executors N"
            + " grows, under RdmaShuffleManager and Spark's sort shuffle, with an all-to-all shuffle of tiny data.",
        "Smoke run: N = 2 and 4, one round; writes perf/target/scale-quick.json unless --out says otherwise"
            + " (the figures are meaningless).");

    /** The command's own options; {@link #parse} turns them into options. */
    static final class Flags {
      @Option(names = "--executors", split = ",", paramLabel = "LIST",
          description = "The values of N, executors of one core each (default 2,4,8,16,32; 2,4 with --quick).")
      List<Integer> executors;

      @Option(names = "--rounds", paramLabel = "N",
          description = "Applications per manager and N (default 2; 1 with --quick).")
      Integer rounds;

      @Option(names = "--partitions-per-executor", paramLabel = "K",
          description = "Map and reduce partitions per executor: N*K of each (default 2).")
      int partitionsPerExecutor = 2;

      @Option(names = "--rows-per-block", paramLabel = "N",
          description = "Rows every map task writes to every reduce partition (default 8).")
      int rowsPerBlock = 8;

      @Option(names = "--value-bytes", paramLabel = "N", description = "Bytes of a row's random value (default 64).")
      int valueBytes = 64;

      @Option(names = "--executor-memory", paramLabel = "M",
          description = "spark.executor.memory (default 384m; Spark's reserved memory is lowered to 64 MiB so that"
              + " small heaps start).")
      String executorMemory = "384m";

      @Option(names = "--start-timeout-s", paramLabel = "S",
          description = "Seconds for an application's executors to register, plus 4 per executor (default 120).")
      int startTimeoutS = 120;

      @Option(names = "--job-timeout-s", paramLabel = "S",
          description = "Seconds each job may take before the run fails (default 600).")
      int jobTimeoutS = 600;

      @Option(names = "--max-peer-connections", paramLabel = "K",
          description = "Also run RdmaShuffleManager with spark.shuffle.rdma.maxPeerConnections=K in every round, the"
              + " curve with a bound beside the one without (default: not run).")
      int maxPeerConnections;

      @Option(names = "--peers-beyond-bound", split = ",", paramLabel = "LIST",
          description = "With --max-peer-connections: one bounded application per value and round, queue (the"
              + " peers past the bound READ in turns) and/or spark (those the bound has no room for read through"
              + " Spark's reader), spark.shuffle.rdma.peersBeyondBound (default queue, the manager's default).")
      List<String> peersBeyondBound;

      @Option(names = "--conf", paramLabel = "KEY=VALUE",
          description = "A Spark setting for RdmaShuffleManager's applications (bounded or not), such as a longer"
              + " spark.shuffle.rdma.transport.connectTimeoutMs where many executors share few cores; repeatable.")
      List<String> conf = new ArrayList<>();

      @Option(names = "--executor-java-options", paramLabel = "OPTIONS",
          description = "spark.executor.extraJavaOptions for every application, both managers', such as a profiler's"
              + " agent; {manager} in it becomes the application's manager (sort, rdma, rdma-bounded, ...), so each"
              + " writes where it is told (default: none).")
      String executorJavaOptions = "";

      @Option(names = "--sample-ms", paramLabel = "MS",
          description = "Shortest wait between two /proc samples; longer when a sample takes long (default 200).")
      long sampleMs = 200;
    }

    static Options parse(String[] args) {
      Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
      Flags f = line.options();
      boolean quick = line.quick();
      List<Integer> executors = f.executors != null ? List.copyOf(f.executors)
          : quick ? List.of(2, 4) : List.of(2, 4, 8, 16, 32);
      int rounds = f.rounds != null ? f.rounds : quick ? 1 : 2;
      if (executors.isEmpty()) {
        throw new IllegalArgumentException("--executors needs at least one number");
      }
      for (int n : executors) {
        if (n < 2) {
          throw new IllegalArgumentException("--executors: every N must be at least 2 (a shuffle between executors),"
              + " got " + n);
        }
      }
      if (new HashSet<>(executors).size() != executors.size()) {
        throw new IllegalArgumentException("--executors: each N once, got " + executors);
      }
      if (rounds <= 0 || f.partitionsPerExecutor <= 0 || f.rowsPerBlock <= 0 || f.valueBytes <= 0
          || f.startTimeoutS <= 0 || f.jobTimeoutS <= 0 || f.sampleMs <= 0 || f.maxPeerConnections < 0) {
        throw new IllegalArgumentException("--rounds, --partitions-per-executor, --rows-per-block, --value-bytes,"
            + " --start-timeout-s, --job-timeout-s, --sample-ms and --max-peer-connections must be positive");
      }
      if (!f.executorMemory.matches("[0-9]+[kmgKMG]?")) {
        throw new IllegalArgumentException("--executor-memory: a size such as 384m, got '" + f.executorMemory + "'");
      }
      Map<String, String> rdmaConf = Cli.sparkSettings(f.conf, Map.of(
          "spark.shuffle.manager", "the benchmark runs both managers",
          "spark.shuffle.rdma.maxPeerConnections", "--max-peer-connections",
          "spark.shuffle.rdma.peersBeyondBound", "--peers-beyond-bound",
          "spark.executor.extraJavaOptions", "--executor-java-options (both managers' executors)"));
      List<String> beyond = f.peersBeyondBound == null ? List.of("queue") : List.copyOf(f.peersBeyondBound);
      if (f.peersBeyondBound != null && f.maxPeerConnections == 0) {
        throw new IllegalArgumentException("--peers-beyond-bound needs --max-peer-connections");
      }
      if (beyond.isEmpty() || new HashSet<>(beyond).size() != beyond.size()
          || !List.of("queue", "spark").containsAll(beyond)) {
        throw new IllegalArgumentException("--peers-beyond-bound: queue, spark or both, each once, got " + beyond);
      }
      List<String> bounded = f.maxPeerConnections == 0 ? List.of()
          : beyond.stream().map(v -> v.equals("spark") ? ScaleFigures.BOUNDED_SPARK : ScaleFigures.BOUNDED).toList();
      return new Options(executors, rounds, f.partitionsPerExecutor, f.rowsPerBlock, f.valueBytes, f.executorMemory,
          f.startTimeoutS, f.jobTimeoutS, f.sampleMs, f.maxPeerConnections, bounded, Map.copyOf(rdmaConf),
          f.executorJavaOptions.strip(), line.out());
    }
  }

  public static void main(String[] args) {
    Cli.main("scale benchmark", args, Options::parse, ScaleBench::run);
  }

  static int run(Options o) throws IOException, TimeoutException {
    System.out.printf(Locale.ROOT, "[scale] N = %s, %d round(s), %d map and reduce partitions per executor, %d rows"
        + " of %d B per block, executors of 1 core and %s%s%n", o.executors(), o.rounds(), o.partitionsPerExecutor(),
        o.rowsPerBlock(), o.valueBytes(), o.executorMemory(), o.maxPeerConnections() > 0
            ? "; RdmaShuffleManager also with at most " + o.maxPeerConnections() + " connections to peers ("
                + String.join(", ", o.boundedManagers()) + ")" : "");
    if (!o.rdmaConf().isEmpty()) {
      System.out.println("[scale] RdmaShuffleManager's applications also set " + new TreeMap<>(o.rdmaConf()));
    }
    List<String> managers = new ArrayList<>(List.of(ScaleFigures.SORT, ScaleFigures.RDMA));
    managers.addAll(o.boundedManagers());
    List<ScaleFigures.App> apps = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    int turn = 0;
    for (int n : o.executors()) {
      try {
        for (int round = 0; round < o.rounds(); round++) {
          List<String> order = new ArrayList<>(managers);
          if (turn++ % 2 == 1) {
            Collections.reverse(order);
          }
          for (String manager : order) {
            apps.add(runApp(o, n, manager, round));
          }
        }
      } catch (Exception e) {
        // A larger N is unlikely to fit where this one did not: what ran so far is the result. Spark's own
        // exceptions (a job aborted after its stage failed too often) are checked ones that Scala throws unchecked.
        failures.add("N=" + n + ": " + firstLine(e));
        System.out.println("[scale] N=" + n + " FAILED, no larger N is tried: " + firstLine(e));
        break;
      }
      // Written after every N, so a run cut short keeps what it measured.
      write(o, ScaleFigures.measurements(apps), false);
    }
    write(o, ScaleFigures.measurements(apps), true);
    if (!failures.isEmpty()) {
      failures.forEach(f -> System.out.println("FAILED: " + f));
      return 1;
    }
    return 0;
  }

  /** An exception's class and the first line of its message (Spark's carry whole stack traces in them). */
  private static String firstLine(Exception e) {
    String m = String.valueOf(e.getMessage());
    int nl = m.indexOf('\n');
    return e.getClass().getName() + ": " + (nl < 0 ? m : m.substring(0, nl));
  }

  private static void write(Options o, List<Measurement> results, boolean last) throws IOException {
    if (results.isEmpty()) {
      if (last) {
        System.out.println("[scale] no N ran under both managers: no results file written");
      }
      return;
    }
    if (last) {
      System.out.println();
      System.out.println("RdmaShuffleManager beside Spark's sort shuffle, per N (median and max over executors;"
          + " job times: median over rounds):");
      ResultTable.print(System.out, results);
    }
    ResultsFile.write(o.out(), results);
    if (last) {
      System.out.println("wrote " + o.out().toAbsolutePath());
    }
  }

  private static ScaleFigures.App runApp(Options o, int n, String manager, int round)
      throws IOException, TimeoutException {
    SparkConf conf = new SparkConf()
        .setAppName("sluice-scale-" + manager + "-n" + n)
        .set("spark.cores.max", String.valueOf(n))
        .set("spark.executor.cores", "1")
        .set("spark.executor.memory", o.executorMemory())
        .set("spark.testing.reservedMemory", String.valueOf(64L << 20))
        .set("spark.ui.enabled", "false")
        .set("spark.locality.wait", "0s")
        // Every executor stands for a host of its own: no reads of a same-Worker peer's files.
        .set("spark.shuffle.readHostLocalDisk", "false")
        .set("spark.shuffle.manager", manager.equals(ScaleFigures.SORT) ? "sort" : RDMA_MANAGER);
    if (!o.executorJavaOptions().isEmpty()) {
      conf.set("spark.executor.extraJavaOptions", o.executorJavaOptions().replace("{manager}", manager));
    }
    if (!manager.equals(ScaleFigures.SORT)) {
      conf.set("spark.shuffle.rdma.transport.shm.enabled", "false");
      o.rdmaConf().forEach(conf::set);
    }
    if (o.boundedManagers().contains(manager)) {
      conf.set("spark.shuffle.rdma.maxPeerConnections", String.valueOf(o.maxPeerConnections()));
      conf.set("spark.shuffle.rdma.peersBeyondBound", manager.equals(ScaleFigures.BOUNDED_SPARK) ? "spark" : "queue");
    }
    String label = String.format(Locale.ROOT, "N=%d %s round %d", n, manager, round + 1);
    long startedApp = System.nanoTime();
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      SparkApps.awaitExecutors(sc.sc(), n, o.startTimeoutS() + 4 * n);
      double startS = (System.nanoTime() - startedApp) / 1e9;
      String appId = sc.sc().applicationId();
      Map<String, Long> pids = awaitProcesses(appId, n, 30);
      List<Long> sampled = new ArrayList<>(pids.values());
      long self = ProcessHandle.current().pid();
      sampled.add(self);
      int parts = n * o.partitionsPerExecutor();
      AllToAllJob.Shape shape = new AllToAllJob.Shape(parts, parts, o.rowsPerBlock(), o.valueBytes());
      // The driver's heap is sampled: start from what this application holds, not what earlier ones left.
      System.gc();
      ExecutorThreads.Snapshot threadsBefore = ExecutorThreads.take(List.copyOf(pids.values()));
      Map<Long, ProcSampler.Peaks> peaks;
      ExecutorThreads.Snapshot threadsAfterCold;
      double cold;
      double warm;
      try (ProcSampler sampler = new ProcSampler(sampled, o.sampleMs()).start()) {
        cold = timed(sc, shape, 1, o.jobTimeoutS());
        threadsAfterCold = ExecutorThreads.take(List.copyOf(pids.values()));
        warm = timed(sc, shape, 2, o.jobTimeoutS());
        peaks = sampler.finish();
      }
      ExecutorThreads.Snapshot threadsAfter = ExecutorThreads.take(List.copyOf(pids.values()));

      Map<String, Map<String, Long>> sluice = new TreeMap<>();
      Map<String, TransportReport> reports = new TreeMap<>();
      ExecutorSluiceMetrics.collect(sc, n).forEach((id, c) -> {
        if (!c.gauges().isEmpty()) {
          sluice.put(id, c.gauges());
        }
        if (c.report() != null) {
          reports.put(id, c.report());
        }
      });
      Map<String, Long> driverSluice = ExecutorSluiceMetrics.local();
      Set<String> transportAddresses = new HashSet<>();
      reports.values().forEach(r -> transportAddresses.add(r.address()));
      Map<Long, ProcSampler.Peaks> executorPeaks = new HashMap<>(peaks);
      executorPeaks.remove(self);

      List<ScaleFigures.Executor> figures = new ArrayList<>();
      for (Map.Entry<String, Long> e : pids.entrySet()) {
        long pid = e.getValue();
        ProcSampler.Peaks p = peaks.get(pid);
        TransportReport r = reports.get(e.getKey());
        int transport = r == null ? 0 : ScaleFigures.transportConnections(p, r.address(), transportAddresses);
        figures.add(new ScaleFigures.Executor(e.getKey(), p, ScaleFigures.peerConnections(pid, executorPeaks), transport,
            sluice.getOrDefault(e.getKey(), Map.of()),
            r == null ? 0 : r.openNanos() / 1e6, r == null ? 0 : r.openWaitNanos() / 1e6,
            r == null ? 0 : r.firstConnectMedianNanos() / 1e6, r == null ? 0 : r.firstConnectMaxNanos() / 1e6,
            threadCpuMs(threadsBefore, threadsAfter, pid, "sluice-proof", "sluice-connect"),
            threadCount(threadsAfter, pid, ExecutorThreads.Kind.SLUICE),
            threadCount(threadsAfter, pid, ExecutorThreads.Kind.NETTY_SHUFFLE),
            threadCpuMs(threadsBefore, threadsAfter, pid, "shuffle-client", "shuffle-server"), limits(pid)));
      }
      ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks.get(self),
          driverSluice.getOrDefault("executors.registered", 0L));
      ScaleFigures.App app = new ScaleFigures.App(n, manager, round, cold, warm, figures, driver,
          coldCpuSeconds(threadsBefore, threadsAfterCold));
      printLine(label, startS, app, reports.size(), sluice.size());
      return app;
    }
  }

  /** The executors' pids, waiting for {@code n} of them to be visible in /proc. */
  private static Map<String, Long> awaitProcesses(String appId, int n, int seconds) throws IOException, TimeoutException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      Map<String, Long> pids = ExecutorProcesses.of(appId);
      if (pids.size() >= n) {
        return pids;
      }
      if (System.nanoTime() > deadline) {
        throw new TimeoutException("found " + pids.size() + " of " + n + " executor processes of " + appId
            + " in /proc within " + seconds + " s (the driver must run on the executors' machine, as root)");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new TimeoutException("interrupted while looking for the executors of " + appId);
      }
    }
  }

  /** Runs the job once and returns its wall time; fails the run past {@code timeoutS}. */
  private static double timed(JavaSparkContext sc, AllToAllJob.Shape shape, long seed, int timeoutS)
      throws TimeoutException {
    long started = System.nanoTime();
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(TimeUnit.SECONDS.toMillis(timeoutS));
        sc.sc().cancelAllJobs();
      } catch (InterruptedException e) {
        // The job ended in time.
      }
    }, "scale-job-deadline");
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      AllToAllJob.run(sc, shape, seed);
    } catch (RuntimeException e) {
      if (System.nanoTime() - started >= TimeUnit.SECONDS.toNanos(timeoutS)) {
        throw new TimeoutException("the all-to-all job did not end within " + timeoutS + " s");
      }
      throw e;
    } finally {
      watchdog.interrupt();
    }
    return (System.nanoTime() - started) / 1e9;
  }

  /** The executors' CPU during the cold job, summed over them: in all, and by what their threads do. */
  private static Map<String, Double> coldCpuSeconds(ExecutorThreads.Snapshot before, ExecutorThreads.Snapshot after) {
    Map<String, Double> seconds = new java.util.LinkedHashMap<>();
    double total = 0;
    for (Map.Entry<ExecutorThreads.Kind, Double> e : ExecutorThreads.between(before, after).entrySet()) {
      seconds.put(e.getKey().label, e.getValue());
      total += e.getValue();
    }
    seconds.put("total", total);
    return seconds;
  }

  private static ProcTables.Limits limits(long pid) {
    try {
      return ProcTables.limits(Files.readString(Path.of("/proc", String.valueOf(pid), "limits")));
    } catch (IOException e) {
      return new ProcTables.Limits(-1, -1);
    }
  }

  private static double threadCpuMs(ExecutorThreads.Snapshot before, ExecutorThreads.Snapshot after, long pid,
      String... prefixes) {
    ExecutorThreads.Process a = process(after, pid);
    ExecutorThreads.Process b = process(before, pid);
    if (a == null) {
      return 0;
    }
    long ticks = 0;
    for (Map.Entry<Long, Long> t : a.threadTicks().entrySet()) {
      String name = a.names().get(t.getKey());
      for (String prefix : prefixes) {
        if (name.startsWith(prefix)) {
          ticks += t.getValue() - (b == null ? 0 : b.threadTicks().getOrDefault(t.getKey(), 0L));
          break;
        }
      }
    }
    return ticks * 10.0; // USER_HZ 100: a tick is 10 ms
  }

  private static int threadCount(ExecutorThreads.Snapshot s, long pid, ExecutorThreads.Kind kind) {
    ExecutorThreads.Process p = process(s, pid);
    return p == null ? 0 : (int) p.names().values().stream().filter(name -> ExecutorThreads.classify(name) == kind)
        .count();
  }

  private static ExecutorThreads.Process process(ExecutorThreads.Snapshot s, long pid) {
    return s.processes().stream().filter(p -> p.pid() == pid).findFirst().orElse(null);
  }

  private static void printLine(String label, double startS, ScaleFigures.App app, int reports, int metrics) {
    List<ScaleFigures.Executor> e = app.executorFigures();
    System.out.printf(Locale.ROOT, "[scale] %-26s start %5.1f s  jobs %6.2f / %6.2f s  executors' CPU in the cold"
        + " job %s  per executor (median/max):"
        + " peers %s  tcp %s  fds %s (limit %.0f)  threads %s  rss %s MB  locked %s kB%s  driver: threads %d tcp %d"
        + " heap %.0f MB%n",
        label, startS, app.coldSeconds(), app.warmSeconds(), cpu(app.coldCpuSeconds()),
        mm(e, x -> x.peerConnections()), mm(e, x -> x.peaks().tcpEstablished()), mm(e, x -> x.peaks().fds()),
        ScaleFigures.min(e, x -> x.limits().openFiles()),
        mm(e, x -> x.peaks().threads()), mm(e, x -> x.peaks().rssKb() / 1024.0), mm(e, x -> x.peaks().lockedKb()),
        !app.manager().equals(ScaleFigures.SORT) ? String.format(Locale.ROOT,
            "  transport: connections %s handshakes %s threads %s; peer connections opened at once %s, waits %s,"
                + " evictions %s, peers passed on %s (reports %d, metrics %d of %d)",
            mm(e.stream().filter(x -> !x.sluice().isEmpty()).toList(), x -> x.openConnections()),
            mm(e.stream().filter(x -> !x.sluice().isEmpty()).toList(), x -> x.handshakes()),
            mm(e, x -> x.transportThreads()), mm(e, x -> x.gauge(ScaleFigures.PEAK)),
            mm(e, x -> x.gauge(ScaleFigures.WAITS)), mm(e, x -> x.gauge(ScaleFigures.EVICTIONS)),
            mm(e, x -> x.gauge(ScaleFigures.PASSED_ON)), reports, metrics,
            e.size()) : "",
        app.driver().peaks().threads(), app.driver().peaks().tcpEstablished(),
        app.driver().peaks().heapUsedBytes() / 1048576.0);
  }

  /** "12.3 s (task 8.1, sluice 1.2, ...)": the total, then each kind that used any. */
  private static String cpu(Map<String, Double> seconds) {
    StringBuilder kinds = new StringBuilder();
    seconds.forEach((kind, s) -> {
      if (!kind.equals("total") && s > 0) {
        kinds.append(kinds.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f", kind, s));
      }
    });
    return String.format(Locale.ROOT, "%.1f s (%s)", seconds.getOrDefault("total", 0.0), kinds);
  }

  private static String mm(List<ScaleFigures.Executor> e, java.util.function.ToDoubleFunction<ScaleFigures.Executor> f) {
    if (e.isEmpty()) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.0f/%.0f", ScaleFigures.median(e, f), ScaleFigures.max(e, f));
  }
}
