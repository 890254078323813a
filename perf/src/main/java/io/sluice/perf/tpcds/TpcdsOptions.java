package io.sluice.perf.tpcds;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * The options of {@code perf/bin/tpcds}. Immutable.
 *
 * @param scale TPC-DS scale factor
 * @param queries {@code all} or a comma-separated list of query names
 * @param master Spark master of both driver applications
 * @param budgetMinutes no query starts once this many minutes have passed since the start; 0: no
 *     budget
 * @param queryTimeoutSeconds deadline for one query under one manager
 * @param executors executors each application waits for (and, on a standalone master, asks for:
 *     one core each)
 * @param executorMemory {@code spark.executor.memory}
 * @param shufflePartitions {@code spark.sql.shuffle.partitions}
 * @param dataRoot where generated data is cached, one folder per scale factor
 * @param workDir logs and result rows of this run
 * @param out the results file
 * @param markdown the per-query table
 * @param shuffleJar the shuffle manager's jar, passed to both applications with {@code --jars}
 * @param sparkConf further {@code key=value} settings for both applications
 * @param batch queries per batch: each manager's application runs a batch's queries, one
 *     application alive at a time
 */
public record TpcdsOptions(double scale, String queries, String master, double budgetMinutes,
    int queryTimeoutSeconds, int executors, String executorMemory, int shufflePartitions, Path dataRoot,
    Path workDir, Path out, Path markdown, String shuffleJar, List<String> sparkConf, int batch) {

  public TpcdsOptions {
    sparkConf = List.copyOf(sparkConf);
  }

  static final Cli.Command COMMAND = new Cli.Command("tpcds", "tpcds",
      "TPC-DS under Spark's sort shuffle and RdmaShuffleManager: the queries in batches, each batch run by one"
          + " manager's application and then the other's (one alive at a time, the order flipping every batch),"
          + " results compared.",
      "Smoke run: q3, q7, q19, q42 and q52 at scale factor 0.01, results under perf/target/ (the figures are"
          + " meaningless).");

  /** The command's own options; {@link #parse} turns them into options. */
  static final class Flags {
    @Option(names = "--sf", paramLabel = "S", description = "Scale factor (default 0.1; 0.01 with --quick).")
    Double scale;

    @Option(names = "--queries", paramLabel = "LIST", description = "all, or names such as q1,q14a,q72 (default all).")
    String queries;

    @Option(names = "--master", paramLabel = "URL",
        description = "Spark master (default $SLUICE_SPARK_MASTER, else local-cluster[2,1,1024]).")
    String master;

    @Option(names = "--time-budget-min", paramLabel = "N",
        description = "Start no query after N minutes (default 0: no budget).")
    double budget;

    @Option(names = "--query-timeout-s", paramLabel = "N",
        description = "Deadline of one query under one manager (default 900).")
    int timeout = 900;

    @Option(names = "--executors", paramLabel = "N",
        description = "Executors per application (default 2; standalone: 1 core each).")
    int executors = 2;

    @Option(names = "--executor-memory", paramLabel = "M", description = "spark.executor.memory (default 768m).")
    String memory = "768m";

    @Option(names = "--shuffle-partitions", paramLabel = "N",
        description = "spark.sql.shuffle.partitions (default 16).")
    int partitions = 16;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Data cache (default ~/.cache/sluice-tpcds).")
    Path dataRoot;

    @Option(names = "--work-dir", paramLabel = "DIR", description = "Logs and result rows (default perf/target/tpcds).")
    Path workDir = Path.of("perf/target/tpcds");

    @Option(names = "--markdown", paramLabel = "FILE",
        description = "Per-query table (default perf/results/tpcds.md; with --quick perf/target/tpcds-quick.md).")
    Path markdown;

    @Option(names = "--jar", paramLabel = "FILE", description = "The shuffle manager's jar (default -Dsluice.spark.jar).")
    String jar;

    @Option(names = "--batch", paramLabel = "N",
        description = "Queries per batch; every batch starts each manager's application once (default 26).")
    int batch = 26;

    @Option(names = "--conf", paramLabel = "KEY=VALUE",
        description = "A further Spark setting for both applications (repeatable).")
    List<String> conf = new ArrayList<>();
  }

  /** The queries of {@code --quick}: small, quick ones that still shuffle (joins and aggregations). */
  static final String QUICK_QUERIES = "q3,q7,q19,q42,q52";

  /**
   * Parses the command line; {@code env} supplies {@code SLUICE_SPARK_MASTER}.
   *
   * @throws IllegalArgumentException naming the bad option
   * @throws Cli.HelpRequested for {@code --help}
   */
  public static TpcdsOptions parse(String[] args, Map<String, String> env, String defaultJar) {
    Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
    Flags f = line.options();
    String master = f.master != null ? f.master : env.getOrDefault("SLUICE_SPARK_MASTER", "");
    if (master.isBlank()) {
      master = "local-cluster[2,1,1024]";
    }
    boolean quick = line.quick();
    double scale = f.scale != null ? f.scale : quick ? 0.01 : 0.1;
    String queries = f.queries != null ? f.queries : quick ? QUICK_QUERIES : "all";
    Path markdown = f.markdown != null ? f.markdown
        : Path.of(quick ? "perf/target/tpcds-quick.md" : "perf/results/tpcds.md");
    Path dataRoot = f.dataRoot != null ? f.dataRoot : TpcdsCache.defaultRoot();
    String jar = f.jar != null ? f.jar : defaultJar == null ? "" : defaultJar;
    for (String c : f.conf) {
      if (c.indexOf('=') <= 0) {
        throw new IllegalArgumentException("--conf needs KEY=VALUE, got " + c);
      }
    }
    if (!(scale > 0) || f.budget < 0 || f.timeout <= 0 || f.executors <= 0 || f.partitions <= 0
        || f.batch <= 0) {
      throw new IllegalArgumentException("--sf, --query-timeout-s, --executors, --shuffle-partitions and --batch must be"
          + " positive, --time-budget-min at least 0");
    }
    if (jar.isBlank()) {
      throw new IllegalArgumentException("the shuffle manager's jar is needed (--jar or -Dsluice.spark.jar)");
    }
    return new TpcdsOptions(scale, queries, master, f.budget, f.timeout, f.executors, f.memory, f.partitions,
        dataRoot, f.workDir, line.out(), markdown, jar, f.conf, f.batch);
  }

  /** Whether the master is a standalone cluster, whose cores the applications ask for ({@code spark.cores.max}). */
  public boolean standalone() {
    return master.startsWith("spark://");
  }
}
