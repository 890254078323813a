package io.sluice.perf.spark;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import io.sluice.perf.bench.Spread;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.function.ToDoubleFunction;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.shuffle.rdma.RdmaShuffleManager;
import org.apache.spark.shuffle.rdma.RdmaShuffleOption;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import picocli.CommandLine.Option;

/**
 * Spark shuffle benchmark: a groupByKey and a sortByKey over generated rows on
 * local-cluster[2,1,1024], under Spark's sort shuffle and under RdmaShuffleManager, plain and
 * with Spark's authentication and AES-GCM network encryption on for both managers.
 *
 * <p>Sluice's costs that come once per application (the transport opened by the first task, the
 * first connections, the JIT compiling its code paths) fall on an application's first job, so
 * the first job (cold) and the later ones (warm) are reported apart. Every round starts one
 * application per manager and per cold job ({@code --cold-jobs}): it runs that job first, then
 * groupBy and sortBy again ({@code --warm-runs} times each). The applications of a round run
 * alternately (sort, rdma, rdma, sort for the two cold jobs), and every other round in the
 * reverse order. Per variant, phase, job and manager the results file gets the median wall time
 * with its minimum and maximum, the ratio of the medians to the sort shuffle's, fetch wait,
 * remote bytes, bytes spilled to disk, and CPU per shuffled MiB: from Spark's task metrics
 * ({@code executorCpuTime}) and from the executor JVMs' threads ({@link ExecutorThreads}: task,
 * Sluice's transport, Netty's block transfer, RPC, JIT, GC, other). Run it through perf/bin/spark-shuffle-bench.
 */
public final class SparkShuffleBench {
  private static final String SORT = "sort";
  private static final String RDMA = "rdma";
  /** RdmaShuffleManager whose reducers do not check READ blocks against their CRC32C. */
  private static final String RDMA_NO_VERIFY = "rdma-noverify";
  private static final String RDMA_COPIES = "rdma-copies";
  /** The sort shuffle with {@link TransportOpenPlugin}: a transport opened in each executor, no data on it. */
  private static final String SORT_OPEN = "sort-open";
  private static final String RDMA_ARCHIVE = "rdma-archive";
  private static final String EXTRA_CLASS_PATH = "spark.executor.extraClassPath";
  private static final String EXTRA_JAVA_OPTIONS = "spark.executor.extraJavaOptions";
  private static final String GROUPBY = "groupby";
  private static final String SORTBY = "sort";
  private static final List<String> JOBS = List.of(GROUPBY, SORTBY);
  /** A short SQL application's job ({@link BenchJobs#sql}); measured cold only. */
  private static final String SQL = "sql";
  /** The jobs that may run cold: every job, and the SQL one. */
  private static final List<String> COLD_JOBS = List.of(GROUPBY, SORTBY, SQL);
  /** The SQL job's checksum per row count, as the first application computed it: every other must agree. */
  private static final Map<Long, Long> SQL_ANSWERS = new java.util.HashMap<>();
  private static final String COLD = "cold";
  private static final String WARM = "warm";
  private static final double MIB = 1024 * 1024;

  private SparkShuffleBench() {}

  /**
   * How both managers run: plain, or with Spark's authentication and AES-GCM network encryption
   * on (Spark's sort shuffle then encrypts its block transfers; RdmaShuffleManager its transport).
   * Encrypted, RdmaShuffleManager reads same-host peers over tcp rather than shm, so that its bytes
   * go through the cipher as the sort shuffle's do.
   */
  enum Variant {
    PLAIN("", Map.of(), Map.of()),
    ENCRYPTED("encrypted.", Map.of(
        "spark.authenticate", "true",
        "spark.network.crypto.enabled", "true"),
        Map.of("spark.shuffle.rdma.transport.shm.enabled", "false"));

    final String namePart;
    final Map<String, String> conf;
    final Map<String, String> rdmaConf;

    Variant(String namePart, Map<String, String> conf, Map<String, String> rdmaConf) {
      this.namePart = namePart;
      this.conf = conf;
      this.rdmaConf = rdmaConf;
    }

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private record Options(long sizeMb, int rounds, Path out, String master, String jar, List<Variant> variants,
      List<String> coldJobs, int warmRuns, String executorMemory, int reducers, boolean noVerify, boolean copies,
      boolean openUnderSort, long sqlRows, Map<String, String> rdmaConf, Optional<ClassArchive> classArchive,
      Optional<Path> workDir) {
    static final Cli.Command COMMAND = new Cli.Command("spark-shuffle-bench", "spark-shuffle",
        "A groupByKey and a sortByKey under Spark's sort shuffle and RdmaShuffleManager, alternately; an"
            + " application's first job (cold) apart from its later ones (warm), with CPU per shuffled MiB.",
        "Smoke run: 8 MB per job, one round, groupBy as the only cold job; writes"
            + " perf/target/spark-shuffle-quick.json unless --out says otherwise (the figures are meaningless).");

    /** How big {@code job} is, as its figures' names say: {@code 128MB}, or {@code 2Mrows} for the sql job. */
    String size(String job) {
      if (!job.equals(SQL)) {
        return sizeMb + "MB";
      }
      return sqlRows % 1_000_000 == 0 ? sqlRows / 1_000_000 + "Mrows"
          : sqlRows % 1000 == 0 ? sqlRows / 1000 + "krows" : sqlRows + "rows";
    }

    /** The command's own options; {@link #parse} turns them into options. */
    static final class Flags {
      @Option(names = "--size-mb", paramLabel = "N",
          description = "MiB of rows per job (default 128; 8 with --quick).")
      Long sizeMb;

      @Option(names = "--rounds", paramLabel = "N", description = "Rounds (default 5; 1 with --quick).")
      Integer rounds;

      @Option(names = "--master", paramLabel = "URL", description = "Spark master (default local-cluster[2,1,1024]).")
      String master = "local-cluster[2,1,1024]";

      @Option(names = "--jar", paramLabel = "FILE",
          description = "The shuffle manager's jar (default -Dsluice.spark.jar).")
      String jar = System.getProperty("sluice.spark.jar", "");

      @Option(names = "--variants", split = ",", paramLabel = "LIST",
          description = "plain, encrypted or both (default plain,encrypted; encrypted: spark.authenticate and"
              + " spark.network.crypto.enabled for both managers).")
      List<String> variants = List.of("plain", "encrypted");

      @Option(names = "--cold-jobs", split = ",", paramLabel = "LIST",
          description = "The jobs measured cold, one application per round and manager each: groupby, sort,"
              + " sql (a short SQL application: a skewed join, a window and a 3,000-partition aggregation"
              + " with AQE over --sql-rows rows), or several (default groupby,sort; groupby with --quick).")
      List<String> coldJobs;

      @Option(names = "--sql-rows", paramLabel = "N",
          description = "Rows of the sql job's facts (default 2000000; 200000 with --quick).")
      Long sqlRows;

      @Option(names = "--warm-runs", paramLabel = "N",
          description = "How often each job runs warm after the cold one, per application (default 1).")
      int warmRuns = 1;

      @Option(names = "--executor-memory", paramLabel = "M", description = "spark.executor.memory (default 768m).")
      String executorMemory = "768m";

      @Option(names = "--reducers", paramLabel = "N",
          description = "Reduce partitions of each job (default 16; 4 at 2048 MB makes the reducers spill).")
      int reducers = 16;

      @Option(names = "--with-noverify",
          description = "Also run RdmaShuffleManager with spark.shuffle.rdma.verifyReads=false (plain variant).")
      boolean noVerify;

      @Option(names = "--with-copies",
          description = "Also run RdmaShuffleManager with spark.shuffle.rdma.sameHostViews=false (plain variant):"
              + " same-host blocks copied into READ destinations instead of deserialized from views.")
      boolean copies;

      @Option(names = "--with-open-under-sort",
          description = "Also run the sort shuffle with a Sluice transport opened in each executor as"
              + " RdmaShuffleManager opens it, its first connection rehearsed, and no data moved on it"
              + " (spark.plugins=io.sluice.perf.spark.TransportOpenPlugin): the transport's cost per"
              + " executor JVM apart from the data path's.")
      boolean openUnderSort;

      @Option(names = "--with-jit-log",
          description = "Start every application's executors with -XX:+PrintCompilation and read their"
              + " output from the local-cluster Workers' folder ($SPARK_HOME/work): for the cold sort job,"
              + " how long each executor's reducers sorted before C2 had compiled Spark's TimSort, per"
              + " application kind beside the sort shuffle's.")
      boolean jitLog;

      @Option(names = "--conf", paramLabel = "KEY=VALUE",
          description = "A Spark setting for RdmaShuffleManager's applications only, such as"
              + " spark.executor.extraJavaOptions for a class-data archive of the shuffle jar; repeatable.")
      List<String> conf = new ArrayList<>();

      @Option(names = "--with-class-archive", paramLabel = "FILE",
          description = "Also run RdmaShuffleManager with its executors started on FILE, a class-data archive"
              + " recorded by bin/sluice-class-archive FILE, and the archive required (-Xshare:on;"
              + " -XX:AOTMode=on on Java 25), so an executor that cannot map it fails to start. Every"
              + " RdmaShuffleManager application then has the class path in FILE.classpath first on its"
              + " executors', on the archive or not.")
      Path classArchive;
    }

    static Options parse(String[] args) {
      Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
      Flags f = line.options();
      boolean quick = line.quick();
      long sizeMb = f.sizeMb != null ? f.sizeMb : quick ? 8 : 128;
      int rounds = f.rounds != null ? f.rounds : quick ? 1 : 5;
      List<String> coldJobs = f.coldJobs != null ? f.coldJobs : quick ? List.of(GROUPBY) : JOBS;
      if (sizeMb <= 0 || rounds <= 0 || f.reducers <= 0 || f.warmRuns < 0) {
        throw new IllegalArgumentException("--size-mb, --rounds and --reducers must be positive, --warm-runs at least 0");
      }
      if (coldJobs.isEmpty() || !COLD_JOBS.containsAll(coldJobs)) {
        throw new IllegalArgumentException("--cold-jobs: groupby, sort, sql or several, got " + coldJobs);
      }
      long sqlRows = f.sqlRows != null ? f.sqlRows : quick ? 200_000 : 2_000_000;
      if (sqlRows <= 0) {
        throw new IllegalArgumentException("--sql-rows must be positive");
      }
      if (f.jar.isEmpty()) {
        throw new IllegalArgumentException("the shuffle jar is needed (--jar or -Dsluice.spark.jar)");
      }
      Map<String, String> reserved = new TreeMap<>();
      for (String key : List.of("spark.master", "spark.app.name", "spark.jars", "spark.ui.enabled", "spark.serializer",
          "spark.shuffle.manager", "spark.authenticate.secret")) {
        reserved.put(key, "the benchmark sets it for both managers");
      }
      reserved.put("spark.executor.memory", "--executor-memory");
      reserved.put(RdmaShuffleOption.VERIFY_READS.key(), "--with-noverify");
      reserved.put(RdmaShuffleOption.SAME_HOST_VIEWS.key(), "--with-copies");
      for (Variant v : Variant.values()) {
        v.conf.keySet().forEach(k -> reserved.put(k, "--variants"));
        v.rdmaConf.keySet().forEach(k -> reserved.put(k, "--variants"));
      }
      ClassArchive classArchive = null;
      if (f.classArchive != null) {
        if (!Files.isRegularFile(f.classArchive) || !Files.isRegularFile(classPathOf(f.classArchive))) {
          throw new IllegalArgumentException("--with-class-archive: " + f.classArchive + " or "
              + classPathOf(f.classArchive) + " is missing (record both with bin/sluice-class-archive "
              + f.classArchive + ")");
        }
        classArchive = ClassArchive.read(f.classArchive, Path.of(f.jar));
        reserved.put(EXTRA_CLASS_PATH, "--with-class-archive");
      }
      Optional<Path> workDir = Optional.empty();
      if (f.jitLog) {
        String home = System.getenv("SPARK_HOME");
        if (!f.master.startsWith("local-cluster") || home == null) {
          throw new IllegalArgumentException("--with-jit-log reads the executors' output where local-cluster's"
              + " Workers keep it ($SPARK_HOME/work): it needs a local-cluster master and SPARK_HOME set"
              + " (perf/bin/spark-shuffle-bench sets it)");
        }
        workDir = Optional.of(Path.of(home, "work"));
      }
      Map<String, String> rdmaConf = Cli.sparkSettings(f.conf, reserved);
      List<Variant> variants = new ArrayList<>();
      for (String v : f.variants) {
        try {
          variants.add(Variant.valueOf(v.trim().toUpperCase(Locale.ROOT)));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("--variants: unknown variant '" + v + "' (plain or encrypted)");
        }
      }
      return new Options(sizeMb, rounds, line.out(), f.master, f.jar, List.copyOf(variants),
          List.copyOf(new LinkedHashSet<>(coldJobs)), f.warmRuns, f.executorMemory, f.reducers, f.noVerify, f.copies,
          f.openUnderSort, sqlRows, rdmaConf, Optional.ofNullable(classArchive), workDir);
    }
  }

  /**
   * One job's figures in one application.
   *
   * @param threads seconds of executor CPU per {@link ExecutorThreads.Kind}; empty where the
   *     executors' threads cannot be read (not on this machine)
   */
  private record Sample(double wallSeconds, long fetchWaitMs, long remoteBytes, TaskTotals.Totals tasks,
      Map<ExecutorThreads.Kind, Double> threads) {
    double shuffledMib() {
      return tasks.writeBytes() / MIB;
    }

    /** Milliseconds of CPU per MiB the job's map tasks wrote to the shuffle. */
    double msPerMib(double cpuSeconds) {
      return shuffledMib() == 0 ? 0 : cpuSeconds * 1000 / shuffledMib();
    }

    /** The job's CPU in Spark's task metrics, in ms per shuffled MiB. */
    double taskMetricsMsPerMib() {
      return msPerMib(tasks.cpuNs() / 1e9);
    }

    /** The executors' threads of every kind together, in ms of CPU per shuffled MiB. */
    double allThreadsMsPerMib() {
      return msPerMib(threads.values().stream().mapToDouble(Double::doubleValue).sum());
    }
  }

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
    if (!o.rdmaConf().isEmpty()) {
      System.out.println("RdmaShuffleManager's applications also set " + o.rdmaConf());
    }
    if (o.coldJobs().contains(SQL)) {
      warmDriverSql(o);
    }
    Map<String, List<Sample>> samples = new TreeMap<>();
    Map<String, List<Long>> sortLoopLags = new TreeMap<>();
    for (int round = 0; round < o.rounds(); round++) {
      for (Variant variant : o.variants()) {
        for (Application app : applications(o, variant, round)) {
          runRound(o, variant, app.manager(), app.coldJob(), rows, samples, sortLoopLags);
        }
      }
    }
    List<Measurement> results = new ArrayList<>();
    Map<String, double[]> rounds = new TreeMap<>();
    for (Variant variant : o.variants()) {
      for (String phase : List.of(COLD, WARM)) {
        for (String job : COLD_JOBS) {
          if (samples.containsKey(key(variant, SORT, phase, job)) && samples.containsKey(key(variant, RDMA, phase, job))) {
            results.addAll(figures(o, variant, phase, job, samples, rounds));
          }
        }
      }
    }
    if (o.noVerify() && o.variants().contains(Variant.PLAIN)) {
      for (String phase : List.of(COLD, WARM)) {
        for (String job : JOBS) {
          if (samples.containsKey(key(Variant.PLAIN, RDMA_NO_VERIFY, phase, job))) {
            results.add(verifyCost(o, phase, job, samples));
          }
        }
      }
    }
    if (o.copies() && o.variants().contains(Variant.PLAIN)) {
      for (String phase : List.of(COLD, WARM)) {
        for (String job : JOBS) {
          if (samples.containsKey(key(Variant.PLAIN, RDMA_COPIES, phase, job))) {
            results.addAll(viewGain(o, phase, job, samples));
          }
        }
      }
    }
    if (o.openUnderSort()) {
      for (Variant variant : o.variants()) {
        for (String phase : List.of(COLD, WARM)) {
          for (String job : COLD_JOBS) {
            if (samples.containsKey(key(variant, SORT_OPEN, phase, job))) {
              results.addAll(openUnderSort(o, variant, phase, job, samples, rounds));
            }
          }
        }
      }
    }
    if (o.classArchive().isPresent()) {
      for (Variant variant : o.variants()) {
        for (String phase : List.of(COLD, WARM)) {
          for (String job : COLD_JOBS) {
            if (samples.containsKey(key(variant, RDMA_ARCHIVE, phase, job))) {
              results.addAll(archiveGain(o, variant, phase, job, samples, rounds));
            }
          }
        }
        results.addAll(STARTUP.beside(startupPrefix(variant, RDMA_ARCHIVE), startupPrefix(variant, RDMA)));
      }
    }
    if (o.workDir().isPresent()) {
      results.addAll(sortLoopLags(o, sortLoopLags));
    }
    results.addAll(STARTUP.measurements(prefix -> {
      for (Variant variant : o.variants()) {
        if (prefix.equals(startupPrefix(variant, RDMA))) {
          for (String job : COLD_JOBS) {
            List<Sample> sort = samples.get(key(variant, SORT, COLD, job));
            if (sort != null) {
              return java.util.Optional.of(new StartupFigures.Baseline(
                  "sort_shuffle." + variant.namePart + COLD + "." + job + "." + o.size(job) + ".wall_ms",
                  Spread.of(walls(sort)).median() * 1000));
            }
          }
        }
      }
      return java.util.Optional.empty();
    }));
    System.out.println();
    System.out.println("RdmaShuffleManager beside Spark's sort shuffle (medians; rounds: every application's value):");
    ResultTable.print(System.out, results, rounds);
    ResultsFile.write(o.out(), results);
    System.out.println("wrote " + o.out().toAbsolutePath());
  }

  /**
   * Runs the sql job once in a throwaway {@code local[1]} application before the measured ones:
   * their driver is this JVM, whose first SQL query would otherwise spend seconds loading and
   * compiling Spark SQL's planner inside whichever application came first. The executors of every
   * measured application are new JVMs all the same.
   */
  private static void warmDriverSql(Options o) {
    SparkConf conf = new SparkConf().setMaster("local[1]").setAppName("sluice-shuffle-bench-sql-warm-up")
        .set("spark.ui.enabled", "false");
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      BenchJobs.sql(Math.min(o.sqlRows(), 100_000));
    }
  }

  /** One application of a round: its shuffle manager and the job it runs first. */
  private record Application(String manager, String coldJob) {}

  /**
   * The applications of one round and variant in the order they run: per cold job every manager,
   * the managers' order flipping from one cold job to the next (sort, rdma, rdma, sort), and the
   * whole list reversed every other round, so no manager always runs first or after the same one.
   */
  private static List<Application> applications(Options o, Variant variant, int round) {
    List<Application> apps = new ArrayList<>();
    for (int i = 0; i < o.coldJobs().size(); i++) {
      List<String> order = new ArrayList<>(managers(o, variant));
      if (i % 2 == 1) {
        Collections.reverse(order);
      }
      for (String manager : order) {
        apps.add(new Application(manager, o.coldJobs().get(i)));
      }
    }
    if (round % 2 == 1) {
      Collections.reverse(apps);
    }
    return apps;
  }

  /** Whether {@code manager} is one of RdmaShuffleManager's applications (the others run the sort shuffle). */
  private static boolean usesRdma(String manager) {
    return !manager.equals(SORT) && !manager.equals(SORT_OPEN);
  }

  /**
   * The managers a variant runs: RdmaShuffleManager on a class-data archive with {@code
   * --with-class-archive}, in both variants; the unchecked RdmaShuffleManager only with {@code
   * --with-noverify} and in the plain variant, since the check is the same CPU pass whatever
   * carried the bytes; the sort shuffle with a transport opened beside it with {@code
   * --with-open-under-sort}, in both variants.
   */
  private static List<String> managers(Options o, Variant variant) {
    List<String> managers = new ArrayList<>(List.of(SORT, RDMA));
    if (o.classArchive().isPresent()) {
      managers.add(RDMA_ARCHIVE);
    }
    if (variant == Variant.PLAIN && o.noVerify()) {
      managers.add(RDMA_NO_VERIFY);
    }
    if (variant == Variant.PLAIN && o.copies()) {
      managers.add(RDMA_COPIES);
    }
    if (o.openUnderSort()) {
      managers.add(SORT_OPEN);
    }
    return managers;
  }

  /**
   * RdmaShuffleManager's median wall time and task-thread CPU per shuffled MiB for one plain job
   * with same-host views (the default) against the same with copies into READ destinations:
   * {@code spark_shuffle.<phase>.<job>.<size>MB.viewed_wall} beside {@code
   * spark_shuffle.copies.<phase>.<job>.<size>MB.wall}, and {@code .viewed_task_cpu_ms_per_mib}
   * beside {@code .copies...task_cpu_ms_per_mib} where the executors' threads were read.
   */
  private static List<Measurement> viewGain(Options o, String phase, String job, Map<String, List<Sample>> samples) {
    List<Sample> viewed = samples.get(key(Variant.PLAIN, RDMA, phase, job));
    List<Sample> copied = samples.get(key(Variant.PLAIN, RDMA_COPIES, phase, job));
    String name = "spark_shuffle." + phase + "." + job + "." + o.size(job) + ".";
    String copiesName = figurePrefix(RDMA_COPIES) + phase + "." + job + "." + o.size(job) + ".";
    List<Measurement> out = new ArrayList<>();
    out.add(new Measurement(name + "viewed_wall", "s", Median.of(walls(viewed)), copiesName + "wall",
        Median.of(walls(copied))));
    double[] viewedCpu = taskCpuPerMib(viewed);
    double[] copiedCpu = taskCpuPerMib(copied);
    if (viewedCpu.length > 0 && copiedCpu.length > 0) {
      out.add(new Measurement(name + "viewed_task_cpu_ms_per_mib", "ms/MiB", Median.of(viewedCpu),
          copiesName + "task_cpu_ms_per_mib", Median.of(copiedCpu)));
    }
    return out;
  }

  /** Each sample's task-thread CPU per shuffled MiB, where the executors' threads were read. */
  private static double[] taskCpuPerMib(List<Sample> samples) {
    return samples.stream().filter(s -> s.threads().containsKey(ExecutorThreads.Kind.TASK))
        .mapToDouble(s -> s.msPerMib(s.threads().get(ExecutorThreads.Kind.TASK))).toArray();
  }

  /** Where an application's executors' startup figures go: one prefix per variant and per executor start. */
  private static String startupPrefix(Variant variant, String manager) {
    return "spark_shuffle." + (manager.equals(RDMA_ARCHIVE) ? "class_archive." : "") + variant.namePart + "startup";
  }

  /** The class path a class-data archive holds for, which bin/sluice-class-archive writes beside it. */
  static Path classPathOf(Path archive) {
    return archive.resolveSibling(archive.getFileName() + ".classpath");
  }

  /**
   * A class-data archive and the class path it holds for, read once from {@code FILE.classpath}
   * when the options are parsed.
   */
  private record ClassArchive(Path file, String classPath) {
    /**
     * Reads {@code archive}'s class path and refuses an archive older than a jar of it (the JVM
     * would not map it: it checks the jars' size and time, and a build packs the shuffle jar anew),
     * or one whose class path does not start with {@code jar}, the shuffle jar the benchmark runs.
     */
    static ClassArchive read(Path archive, Path jar) {
      try {
        String classPath = Files.readString(classPathOf(archive)).strip();
        String[] entries = classPath.split(File.pathSeparator);
        if (!Files.isRegularFile(jar) || !Files.isSameFile(Path.of(entries[0]), jar)) {
          throw new IllegalArgumentException("--with-class-archive: " + archive + " holds for " + entries[0]
              + ", not the shuffle jar " + jar + "; record it for that jar (SLUICE_JAR=" + jar
              + " bin/sluice-class-archive " + archive + ")");
        }
        FileTime recorded = Files.getLastModifiedTime(archive);
        for (String entry : entries) {
          Path onPath = Path.of(entry);
          if (!Files.isRegularFile(onPath) || Files.getLastModifiedTime(onPath).compareTo(recorded) > 0) {
            throw new IllegalArgumentException("--with-class-archive: " + onPath + " is missing or newer than "
                + archive + "; record it again (bin/sluice-class-archive " + archive + ")");
          }
        }
        return new ClassArchive(archive, classPath);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + archive + " or " + classPathOf(archive), e);
      }
    }

    /**
     * The JVM flags that start an executor on the archive and require it, so that an executor that
     * cannot map it (another JDK, a changed jar) fails instead of running without it unnoticed.
     * Executors of a local-cluster run this JVM's Java.
     */
    String flags() {
      String path = file.toAbsolutePath().toString();
      return Runtime.version().feature() >= 25 ? "-XX:AOTMode=on -XX:AOTCache=" + path
          : "-Xshare:on -XX:SharedArchiveFile=" + path;
    }
  }

  /**
   * RdmaShuffleManager's figures for one job with its executors on the class-data archive against
   * the same without it in the same run: {@code spark_shuffle.class_archive.<variant><phase>.<job>.<size>.wall}
   * beside {@code spark_shuffle.<variant><phase>.<job>.<size>.wall}, and the executors' CPU per
   * shuffled MiB in all, in threads that exited (the open's own) and in the JIT's where they were
   * read. Each application's wall time goes to {@code rounds}.
   */
  private static List<Measurement> archiveGain(Options o, Variant variant, String phase, String job,
      Map<String, List<Sample>> samples, Map<String, double[]> rounds) {
    List<Sample> archived = samples.get(key(variant, RDMA_ARCHIVE, phase, job));
    List<Sample> plain = samples.get(key(variant, RDMA, phase, job));
    String suffix = variant.namePart + phase + "." + job + "." + o.size(job);
    String name = figurePrefix(RDMA_ARCHIVE) + suffix;
    String base = "spark_shuffle." + suffix;
    List<Measurement> out = new ArrayList<>(List.of(wall(name, base, archived, plain, rounds)));
    out.addAll(threadCpu(name, base, archived, plain));
    return out;
  }

  /** {@code name.wall} beside {@code baseName.wall}, medians; the wall times of {@code samples} go to {@code rounds}. */
  private static Measurement wall(String name, String baseName, List<Sample> samples, List<Sample> baseline,
      Map<String, double[]> rounds) {
    rounds.put(name + ".wall", walls(samples));
    return new Measurement(name + ".wall", "s", Median.of(walls(samples)), baseName + ".wall",
        Median.of(walls(baseline)));
  }

  /**
   * The executors' CPU per shuffled MiB in all their threads, in threads that exited (an open's
   * own) and in the JIT's compiler threads, {@code samples} beside {@code baseline}; none where the
   * threads were not read.
   */
  private static List<Measurement> threadCpu(String name, String baseName, List<Sample> samples,
      List<Sample> baseline) {
    if (samples.get(0).threads().isEmpty() || baseline.get(0).threads().isEmpty()) {
      return List.of();
    }
    return List.of(
        median(name + ".cpu_per_mib.threads.all", baseName + ".cpu_per_mib.threads.all", "ms/MiB", samples, baseline,
            Sample::allThreadsMsPerMib),
        median(name + ".cpu_per_mib.threads.exited", baseName + ".cpu_per_mib.threads.exited", "ms/MiB", samples,
            baseline, s -> s.msPerMib(s.threads().getOrDefault(ExecutorThreads.Kind.EXITED, 0.0))),
        median(name + ".cpu_per_mib.threads.jit", baseName + ".cpu_per_mib.threads.jit", "ms/MiB", samples,
            baseline, s -> s.msPerMib(s.threads().getOrDefault(ExecutorThreads.Kind.JIT, 0.0))));
  }

  /**
   * The sort shuffle with a transport opened in each executor and no data on it ({@link
   * TransportOpenPlugin}) against the sort shuffle alone, and RdmaShuffleManager against it: {@code
   * spark_shuffle.open_under_sort.<variant><phase>.<job>.<size>MB.*} (wall; CPU per shuffled MiB in
   * Spark's task metrics, in every executor thread, in threads that exited and in the JIT's) beside
   * the sort shuffle's, and {@code spark_shuffle.<variant><phase>.<job>.<size>MB.data_path_wall} (RdmaShuffleManager)
   * beside {@code spark_shuffle.open_under_sort...wall}: what the transport's per-JVM cost explains of
   * the gap, and what is left for the data path.
   */
  private static List<Measurement> openUnderSort(Options o, Variant variant, String phase, String job,
      Map<String, List<Sample>> samples, Map<String, double[]> rounds) {
    List<Sample> opened = samples.get(key(variant, SORT_OPEN, phase, job));
    List<Sample> sort = samples.get(key(variant, SORT, phase, job));
    List<Sample> rdma = samples.get(key(variant, RDMA, phase, job));
    String suffix = variant.namePart + phase + "." + job + "." + o.size(job);
    String name = figurePrefix(SORT_OPEN) + suffix;
    String base = "sort_shuffle." + suffix;
    List<Measurement> out = new ArrayList<>(List.of(wall(name, base, opened, sort, rounds),
        median(name + ".cpu_per_mib.task_metrics", base + ".cpu_per_mib.task_metrics", "ms/MiB", opened, sort,
            Sample::taskMetricsMsPerMib)));
    out.addAll(threadCpu(name, base, opened, sort));
    if (rdma != null) {
      out.add(new Measurement("spark_shuffle." + suffix + ".data_path_wall", "s", Median.of(walls(rdma)),
          name + ".wall", Median.of(walls(opened))));
    }
    return out;
  }

  /**
   * RdmaShuffleManager's median wall time for one plain job with verifyReads on (the default)
   * against the same with it off: {@code spark_shuffle.<phase>.<job>.<size>MB.verified_wall} beside
   * {@code spark_shuffle.noverify.<phase>.<job>.<size>MB.wall}.
   */
  private static Measurement verifyCost(Options o, String phase, String job, Map<String, List<Sample>> samples) {
    double checked = Median.of(walls(samples.get(key(Variant.PLAIN, RDMA, phase, job))));
    double unchecked = Median.of(walls(samples.get(key(Variant.PLAIN, RDMA_NO_VERIFY, phase, job))));
    return new Measurement("spark_shuffle." + phase + "." + job + "." + o.size(job) + ".verified_wall", "s",
        checked, figurePrefix(RDMA_NO_VERIFY) + phase + "." + job + "." + o.size(job) + ".wall", unchecked);
  }

  private static double[] walls(List<Sample> s) {
    return s.stream().mapToDouble(Sample::wallSeconds).toArray();
  }

  /**
   * The figures of one job in one phase under one variant, RdmaShuffleManager against the sort
   * shuffle: medians, the wall time's spread, and CPU per shuffled MiB. Each application's wall
   * time goes to {@code rounds}.
   */
  private static List<Measurement> figures(Options o, Variant variant, String phase, String job,
      Map<String, List<Sample>> samples, Map<String, double[]> rounds) {
    List<Sample> rdma = samples.get(key(variant, RDMA, phase, job));
    List<Sample> sort = samples.get(key(variant, SORT, phase, job));
    String prefix = "spark_shuffle." + variant.namePart + phase + "." + job + "." + o.size(job);
    String base = "sort_shuffle." + variant.namePart + phase + "." + job + "." + o.size(job);
    Spread rdmaWall = Spread.of(walls(rdma));
    Spread sortWall = Spread.of(walls(sort));
    rounds.put(prefix + ".wall", walls(rdma));
    rounds.put(base + ".wall", walls(sort));
    List<Measurement> m = new ArrayList<>(List.of(
        new Measurement(prefix + ".wall", "s", rdmaWall.median(), base + ".wall", sortWall.median()),
        new Measurement(prefix + ".wall_min", "s", rdmaWall.min(), base + ".wall_min", sortWall.min()),
        new Measurement(prefix + ".wall_max", "s", rdmaWall.max(), base + ".wall_max", sortWall.max()),
        new Measurement(prefix + ".wall_ratio", "x", rdmaWall.median() / sortWall.median(), base + ".wall_ratio", 1.0),
        median(prefix + ".fetch_wait", base + ".fetch_wait", "ms", rdma, sort, s -> s.fetchWaitMs()),
        median(prefix + ".remote_read", base + ".remote_read", "MB", rdma, sort, s -> s.remoteBytes() / MIB),
        median(prefix + ".spill_disk", base + ".spill_disk", "MB", rdma, sort, s -> s.tasks().diskSpilled() / MIB),
        median(prefix + ".cpu_per_mib.task_metrics", base + ".cpu_per_mib.task_metrics", "ms/MiB", rdma, sort,
            Sample::taskMetricsMsPerMib)));
    if (!rdma.get(0).threads().isEmpty() && !sort.get(0).threads().isEmpty()) {
      for (ExecutorThreads.Kind kind : ExecutorThreads.Kind.values()) {
        m.add(median(prefix + ".cpu_per_mib.threads." + kind.label, base + ".cpu_per_mib.threads." + kind.label,
            "ms/MiB", rdma, sort, s -> s.msPerMib(s.threads().get(kind))));
      }
      m.add(median(prefix + ".cpu_per_mib.threads.all", base + ".cpu_per_mib.threads.all", "ms/MiB", rdma, sort,
          Sample::allThreadsMsPerMib));
    }
    return m;
  }

  private static Measurement median(String name, String baseName, String unit, List<Sample> rdma, List<Sample> sort,
      ToDoubleFunction<Sample> figure) {
    return new Measurement(name, unit, Median.of(rdma.stream().mapToDouble(figure).toArray()), baseName,
        Median.of(sort.stream().mapToDouble(figure).toArray()));
  }

  private static String key(Variant variant, String manager, String phase, String job) {
    return variant.label() + "." + manager + "." + phase + "." + job;
  }

  /**
   * With {@code --with-jit-log}, each application kind's {@link CompilationLog#sortLoopC2LagMs}
   * in the cold sort job, the median over its executors and rounds, beside the sort shuffle's:
   * {@code <kind's prefix><variant>cold.sort.<size>.jit.sort_loop_c2_lag} (ms), and how many
   * executors' logs gave one ({@code ...sort_loop_c2_lag_executors}).
   */
  private static List<Measurement> sortLoopLags(Options o, Map<String, List<Long>> lags) {
    List<Measurement> out = new ArrayList<>();
    for (Variant variant : o.variants()) {
      List<Long> sort = lags.get(key(variant, SORT, COLD, SORTBY));
      if (sort == null || sort.isEmpty()) {
        continue;
      }
      String suffix = variant.namePart + COLD + "." + SORTBY + "." + o.size(SORTBY) + ".jit.sort_loop_c2_lag";
      String base = "sort_shuffle." + suffix;
      for (String manager : managers(o, variant)) {
        List<Long> l = lags.get(key(variant, manager, COLD, SORTBY));
        if (manager.equals(SORT) || l == null || l.isEmpty()) {
          continue;
        }
        String name = figurePrefix(manager) + suffix;
        out.add(new Measurement(name, "ms", Median.of(l.stream().mapToDouble(Long::doubleValue).toArray()), base,
            Median.of(sort.stream().mapToDouble(Long::doubleValue).toArray())));
        out.add(new Measurement(name + "_executors", "executors", l.size(), base + "_executors", sort.size()));
      }
    }
    return out;
  }

  /**
   * Where the figures of an application kind other than the sort shuffle start: RdmaShuffleManager's
   * {@code spark_shuffle.}, each variant's with its own part after it.
   */
  private static String figurePrefix(String manager) {
    return switch (manager) {
      case SORT_OPEN -> "spark_shuffle.open_under_sort.";
      case RDMA_ARCHIVE -> "spark_shuffle.class_archive.";
      case RDMA_NO_VERIFY -> "spark_shuffle.noverify.";
      case RDMA_COPIES -> "spark_shuffle.copies.";
      default -> "spark_shuffle.";
    };
  }

  /**
   * One application: {@code coldJob} first, then every job {@code warmRuns} times. Prints a line
   * per job and adds its sample to {@code samples}; with {@code --with-jit-log} and the sort job
   * cold, adds its executors' {@link CompilationLog#sortLoopC2LagMs} to {@code sortLoopLags}.
   */
  private static void runRound(Options o, Variant variant, String manager, String coldJob, long rows,
      Map<String, List<Sample>> samples, Map<String, List<Long>> sortLoopLags) throws TimeoutException {
    SparkConf conf = new SparkConf()
        .setMaster(o.master())
        .setAppName("sluice-shuffle-bench-" + variant.label() + "-" + manager)
        .set("spark.jars", o.jar() + "," + SparkApps.ownJar())
        .set("spark.executor.memory", o.executorMemory())
        .set("spark.ui.enabled", "false")
        .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer");
    if (usesRdma(manager)) {
      conf.set("spark.shuffle.manager", RdmaShuffleManager.class.getName());
      conf.set(RdmaShuffleOption.VERIFY_READS.key(), String.valueOf(!manager.equals(RDMA_NO_VERIFY)));
      conf.set(RdmaShuffleOption.SAME_HOST_VIEWS.key(), String.valueOf(!manager.equals(RDMA_COPIES)));
      variant.rdmaConf.forEach(conf::set);
      o.rdmaConf().forEach(conf::set);
      if (o.classArchive().isPresent()) {
        // Every RdmaShuffleManager application gets the archive's class path, so that the archive is
        // all that differs between those on it and those not.
        conf.set(EXTRA_CLASS_PATH, o.classArchive().get().classPath());
      }
      if (manager.equals(RDMA_ARCHIVE)) {
        String flags = o.classArchive().orElseThrow().flags();
        conf.set(EXTRA_JAVA_OPTIONS, o.rdmaConf().containsKey(EXTRA_JAVA_OPTIONS)
            ? o.rdmaConf().get(EXTRA_JAVA_OPTIONS) + " " + flags : flags);
      }
    }
    if (manager.equals(SORT_OPEN)) {
      conf.set("spark.plugins", TransportOpenPlugin.class.getName());
    }
    variant.conf.forEach(conf::set);
    if (variant == Variant.ENCRYPTED) {
      conf.set("spark.authenticate.secret", UUID.randomUUID().toString());
    }
    if (o.workDir().isPresent()) {
      conf.set(EXTRA_JAVA_OPTIONS, (conf.get(EXTRA_JAVA_OPTIONS, "") + " -XX:+PrintCompilation").strip());
    }
    int slices = 8;
    int reducers = o.reducers();
    List<String> jobs = new ArrayList<>(List.of(coldJob));
    for (int i = 0; i < o.warmRuns(); i++) {
      jobs.addAll(JOBS);
    }
    String appId;
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      appId = sc.sc().applicationId();
      SparkApps.awaitExecutors(sc.sc(), 2, 120);
      List<Long> executors = ExecutorThreads.executorsOf(ProcessHandle.current().pid());
      ShuffleReadTotals totals = new ShuffleReadTotals();
      sc.sc().addSparkListener(totals);
      TaskTotals taskTotals = new TaskTotals();
      sc.sc().addSparkListener(taskTotals);
      for (int n = 0; n < jobs.size(); n++) {
        String job = jobs.get(n);
        String phase = n == 0 ? COLD : WARM;
        ShuffleReadTotals.Totals before = totals.snapshot();
        TaskTotals.Totals tasksBefore = taskTotals.snapshot();
        ExecutorThreads.Snapshot threadsBefore = ExecutorThreads.take(executors);
        long started = System.nanoTime();
        long check = switch (job) {
          case GROUPBY -> BenchJobs.groupBy(sc, rows, slices, reducers);
          case SQL -> BenchJobs.sql(o.sqlRows());
          default -> BenchJobs.sort(sc, rows, slices, reducers);
        };
        double seconds = (System.nanoTime() - started) / 1e9;
        ExecutorThreads.Snapshot threadsAfter = ExecutorThreads.take(executors);
        long expected = switch (job) {
          case GROUPBY -> rows * (BenchJobs.ROW_BYTES - 8);
          case SQL -> SQL_ANSWERS.computeIfAbsent(o.sqlRows(), r -> check);
          default -> rows;
        };
        if (check != expected) {
          throw new IllegalStateException(job + " under " + manager + " returned " + check + ", expected " + expected
              + (job.equals(SQL) ? " (the first application's answer)" : ""));
        }
        sc.sc().listenerBus().waitUntilEmpty(30_000);
        ShuffleReadTotals.Totals t = totals.snapshot().minus(before);
        TaskTotals.Totals tasks = taskTotals.snapshot().minus(tasksBefore);
        Map<ExecutorThreads.Kind, Double> threads = executors.isEmpty() ? Map.of()
            : ExecutorThreads.between(threadsBefore, threadsAfter);
        Sample sample = new Sample(seconds, t.fetchWaitMs(), t.remoteBytes(), tasks, threads);
        samples.computeIfAbsent(key(variant, manager, phase, job), k -> new ArrayList<>()).add(sample);
        System.out.printf("%-9s %-13s %-4s %-8s %7.2f s  fetch wait %6d ms  remote %8.1f MB  spilled %7.1f MB"
            + "  CPU ms/MiB: tasks %6.2f%s%n", variant.label(), manager, phase, job, seconds, t.fetchWaitMs(),
            t.remoteBytes() / MIB, tasks.diskSpilled() / MIB, sample.taskMetricsMsPerMib(),
            threadLine(sample));
      }
      if (usesRdma(manager)) {
        STARTUP.collect(sc, startupPrefix(variant, manager));
      }
    }
    if (o.workDir().isPresent() && coldJob.equals(SORTBY)) {
      // The executors have stopped with the application; what they logged of the cold job is written.
      List<Long> lags = CompilationLog.sortLoopC2LagsMs(o.workDir().get().resolve(appId));
      sortLoopLags.computeIfAbsent(key(variant, manager, COLD, SORTBY), k -> new ArrayList<>()).addAll(lags);
      System.out.printf("%-9s %-13s cold sort: the reducers' sort loop reached C2 %s ms after it got hot%n",
          variant.label(), manager, lags);
    }
  }

  /** The executors' thread CPU of one job per shuffled MiB, by kind, for its progress line. */
  private static String threadLine(Sample s) {
    if (s.threads().isEmpty()) {
      return "";
    }
    StringBuilder b = new StringBuilder("  threads");
    for (Map.Entry<ExecutorThreads.Kind, Double> e : s.threads().entrySet()) {
      b.append(String.format(Locale.ROOT, " %s %.2f", e.getKey().label, s.msPerMib(e.getValue())));
    }
    return b.toString();
  }
}
