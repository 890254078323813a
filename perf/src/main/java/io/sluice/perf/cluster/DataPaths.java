package io.sluice.perf.cluster;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * The bytes RdmaShuffleManager's reducers READ per data path (shm, tcp, verbs), summed over the
 * application's live executors, from each executor's {@code RdmaShuffleManager.localTransportReport()}.
 * The manager is looked up by name because applications here are compiled without it: it arrives
 * with {@code --jars} as users pass it, and the same application also runs under Spark's sort
 * shuffle. Stateless.
 */
public final class DataPaths {
  private static final String MANAGER = "org.apache.spark.shuffle.rdma.RdmaShuffleManager";

  private DataPaths() {}

  /**
   * One executor's report: its id, provider and bytes per path. Immutable. A class rather than a
   * record because Spark's Kryo serializer (task results) cannot build records.
   */
  public static final class Report implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final String executorId;
    private final String provider;
    private final TreeMap<String, Long> bytesReadByPath;

    Report(String executorId, String provider, Map<String, Long> bytesReadByPath) {
      this.executorId = executorId;
      this.provider = provider;
      this.bytesReadByPath = new TreeMap<>(bytesReadByPath);
    }

    public String executorId() {
      return executorId;
    }

    public String provider() {
      return provider;
    }

    public Map<String, Long> bytesReadByPath() {
      return java.util.Collections.unmodifiableMap(bytesReadByPath);
    }
  }

  /**
   * Asks every executor for its report with a job of several tasks per core. Executors that run
   * none of its tasks are missed, so call it while the executors are idle. Empty when the
   * application does not run RdmaShuffleManager.
   */
  public static List<Report> collect(JavaSparkContext sc, int slots) {
    int tasks = Math.max(1, slots) * 4;
    List<Report> all = sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks)
        .mapPartitions(ignored -> local().stream().iterator())
        .collect();
    Map<String, Report> byExecutor = new TreeMap<>();
    for (Report r : all) {
      byExecutor.putIfAbsent(r.executorId(), r);
    }
    return new ArrayList<>(byExecutor.values());
  }

  /** Bytes per path over all reports. */
  public static Map<String, Long> total(List<Report> reports) {
    Map<String, Long> sum = new TreeMap<>();
    for (Report r : reports) {
      r.bytesReadByPath().forEach((path, n) -> sum.merge(path, n, Long::sum));
    }
    return sum;
  }

  /** This executor's report; call it inside a task. */
  private static Optional<Report> local() {
    Object manager = SparkEnv.get().shuffleManager();
    if (!manager.getClass().getName().equals(MANAGER)) {
      return Optional.empty();
    }
    try {
      Method m = manager.getClass().getMethod("localTransportReport");
      Optional<?> report = (Optional<?>) m.invoke(null);
      if (report.isEmpty()) {
        return Optional.of(new Report(SparkEnv.get().executorId(), "none (fell back to Spark's shuffle)", Map.of()));
      }
      Object r = report.get();
      @SuppressWarnings("unchecked")
      Map<String, Long> bytes = (Map<String, Long>) r.getClass().getMethod("bytesReadByPath").invoke(r);
      String provider = (String) r.getClass().getMethod("provider").invoke(r);
      return Optional.of(new Report(SparkEnv.get().executorId(), provider, new TreeMap<>(bytes)));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read the transport report of " + MANAGER + ": " + e, e);
    }
  }
}
