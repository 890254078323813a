package io.sluice.perf.tpcds;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
 */
public record TpcdsOptions(double scale, String queries, String master, double budgetMinutes,
    int queryTimeoutSeconds, int executors, String executorMemory, int shufflePartitions, Path dataRoot,
    Path workDir, Path out, Path markdown, String shuffleJar, List<String> sparkConf) {

  public TpcdsOptions {
    sparkConf = List.copyOf(sparkConf);
  }

  public static final String USAGE = """
      perf/bin/tpcds [options]
        --sf S                 scale factor (default 0.1)
        --queries LIST         all, or names such as q1,q14a,q72 (default all)
        --master URL           Spark master (default $SLUICE_SPARK_MASTER, else local-cluster[2,1,1024])
        --time-budget-min N    start no query after N minutes (default 0: no budget)
        --query-timeout-s N    deadline of one query under one manager (default 900)
        --executors N          executors per application (default 2; standalone: 1 core each)
        --executor-memory M    spark.executor.memory (default 768m)
        --shuffle-partitions N spark.sql.shuffle.partitions (default 16)
        --data-dir DIR         data cache (default ~/.cache/sluice-tpcds)
        --work-dir DIR         logs and result rows (default perf/target/tpcds)
        --out FILE             results (default perf/results/tpcds.json)
        --markdown FILE        per-query table (default perf/results/tpcds.md)
        --jar FILE             the shuffle manager's jar (default -Dsluice.spark.jar)
        --conf KEY=VALUE       a further Spark setting for both applications (repeatable)""";

  /** Parses the command line; {@code env} supplies {@code SLUICE_SPARK_MASTER}. */
  public static TpcdsOptions parse(String[] args, Map<String, String> env, String defaultJar) {
    double scale = 0.1;
    String queries = "all";
    String master = env.getOrDefault("SLUICE_SPARK_MASTER", "");
    if (master.isBlank()) {
      master = "local-cluster[2,1,1024]";
    }
    double budget = 0;
    int timeout = 900;
    int executors = 2;
    String memory = "768m";
    int partitions = 16;
    Path dataRoot = TpcdsCache.defaultRoot();
    Path workDir = Path.of("perf/target/tpcds");
    Path out = Path.of("perf/results/tpcds.json");
    Path markdown = Path.of("perf/results/tpcds.md");
    String jar = defaultJar == null ? "" : defaultJar;
    List<String> conf = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + a + " needs a value");
      }
      String v = args[++i];
      switch (a) {
        case "--sf" -> scale = Double.parseDouble(v);
        case "--queries" -> queries = v;
        case "--master" -> master = v;
        case "--time-budget-min" -> budget = Double.parseDouble(v);
        case "--query-timeout-s" -> timeout = Integer.parseInt(v);
        case "--executors" -> executors = Integer.parseInt(v);
        case "--executor-memory" -> memory = v;
        case "--shuffle-partitions" -> partitions = Integer.parseInt(v);
        case "--data-dir" -> dataRoot = Path.of(v);
        case "--work-dir" -> workDir = Path.of(v);
        case "--out" -> out = Path.of(v);
        case "--markdown" -> markdown = Path.of(v);
        case "--jar" -> jar = v;
        case "--conf" -> {
          if (v.indexOf('=') <= 0) {
            throw new IllegalArgumentException("--conf needs KEY=VALUE, got " + v);
          }
          conf.add(v);
        }
        default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
      }
    }
    if (!(scale > 0) || budget < 0 || timeout <= 0 || executors <= 0 || partitions <= 0) {
      throw new IllegalArgumentException("--sf, --query-timeout-s, --executors and --shuffle-partitions must be"
          + " positive, --time-budget-min at least 0");
    }
    if (jar.isBlank()) {
      throw new IllegalArgumentException("the shuffle manager's jar is needed (--jar or -Dsluice.spark.jar)");
    }
    return new TpcdsOptions(scale, queries, master, budget, timeout, executors, memory, partitions, dataRoot,
        workDir, out, markdown, jar, conf);
  }

  /** Whether the master is a standalone cluster, where the two applications share the cores. */
  public boolean standalone() {
    return master.startsWith("spark://");
  }
}
