package io.sluice.perf.report;

import io.sluice.perf.bench.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Decides what the report shows for each results file under {@code perf/results}: which
 * measurements become which chart, and which go in the file's table. Files it does not know get a
 * table and no chart. Stateless.
 */
public final class Sections {
  private static final Pattern TPCDS = Pattern.compile("tpcds\\.(sf[0-9.]+)\\.(q[0-9]+[a-z]?)\\.([a-z_]+)");
  private static final Pattern SCALE = Pattern.compile("scale\\.n([0-9]+)\\.(.+)");

  /** The files with charts, in report order. */
  public static final List<String> KNOWN = List.of("tpcds.json", "terasort.json", "spark-shuffle.json",
      "transport.json", "flight.json", "hadoop-rpc.json", "verbs-lab.json", "scale.json");

  private Sections() {}

  public static Section of(String fileName, List<Measurement> m) {
    return switch (fileName) {
      case "tpcds.json" -> tpcds(m);
      case "terasort.json" -> new Section("TeraSort", fileName, List.of(chart("terasort.png",
          "TeraSort phases: RdmaShuffleManager and the sort shuffle", "seconds", "RdmaShuffleManager",
          "sort shuffle", m, x -> x.unit().equals("s"), Sections::withoutFirstPart)), m, "");
      case "spark-shuffle.json" -> new Section("Spark shuffle", fileName, List.of(
          chart("spark-shuffle.png", "Spark shuffle jobs: wall time (median)", "seconds", "RdmaShuffleManager",
              "sort shuffle", m, x -> x.name().endsWith(".wall"), x -> strip(withoutFirstPart(x), ".wall")),
          chart("spark-shuffle-cpu.png", "Spark shuffle jobs: executor CPU per shuffled MiB, all threads", "ms/MiB",
              "RdmaShuffleManager", "sort shuffle", m, x -> x.name().endsWith(".cpu_per_mib.threads.all"),
              x -> strip(withoutFirstPart(x), ".cpu_per_mib.threads.all"))), m, "");
      case "transport.json" -> new Section("Transport", fileName, List.of(chart("transport.png",
          "Transport READ throughput", "GB/s", "Sluice READ", "baseline (socket stream for tcp, memcpy for shm)", m,
          x -> x.unit().equals("GB/s") && x.name().contains(".read."), x -> x.name().replace(".read.", " "))), m, "");
      case "flight.json" -> new Section("Arrow Flight", fileName, List.of(chart("flight.png",
          "Arrow Flight throughput", "GB/s", "Sluice data plane", "gRPC Flight", m,
          // A checked get beside an unchecked one is a cost, not a comparison with gRPC: the table shows it.
          x -> x.unit().equals("GB/s") && !x.name().endsWith(".verified"), Sections::withoutFirstPart)), m, "");
      case "hadoop-rpc.json" -> new Section("Hadoop RPC", fileName, List.of(
          chart("hadoop-rpc.png", "Hadoop RPC echo: calls per second (small messages)", "calls/s",
              "Sluice RPC engine", "stock (ProtobufRpcEngine2)", m,
              x -> x.unit().equals("calls/s") && x.name().startsWith("hadoop.sluice.")
                  && !x.name().contains(".1MiB."),
              x -> strip(x.name().replace("hadoop.sluice.echo.", ""), ".calls").replace(".threads", " x")),
          chart("hadoop-rpc-1MiB.png", "Hadoop RPC echo of 1 MiB: throughput", "MiB/s", "Sluice RPC engine",
              "stock (ProtobufRpcEngine2)", m,
              x -> x.unit().equals("MiB/s") && x.name().startsWith("hadoop.sluice."),
              x -> strip(x.name().replace("hadoop.sluice.echo.", ""), ".throughput").replace(".threads", " x"))),
          m, "");
      case "verbs-lab.json" -> new Section("verbs in the SoftRoCE lab", fileName, List.of(chart("verbs-lab.png",
          "verbs READ throughput (SoftRoCE, emulated)", "MB/s", "verbs READ", "baseline", m,
          x -> x.unit().equals("MB/s"), x -> x.name().replace("verbs.read.", ""))), m, "");
      case "scale.json" -> new Section("Scale: per-executor resources against N", fileName, List.of(
          chart("scale-connections.png", "Connections to other executors per executor (median) against N", "connections",
              "RdmaShuffleManager", "sort shuffle", m, scale("peer_connections.median"), Sections::executorsLabel),
          chart("scale-threads.png", "Threads per executor JVM (median of peaks) against N", "threads",
              "RdmaShuffleManager", "sort shuffle", m, scale("threads.median"), Sections::executorsLabel),
          chart("scale-job-ratio.png", "All-to-all shuffle job (cold): time against the sort shuffle's, by N", "x",
              "RdmaShuffleManager / sort shuffle", "sort shuffle (1.0)", m, scale("job.cold_ratio"),
              Sections::executorsLabel),
          chart("scale-bounded-connections.png", "Connections to other executors per executor (median) against N,"
              + " with and without spark.shuffle.rdma.maxPeerConnections", "connections", "with the bound",
              "without", m, scale("bounded.peer_connections.median"), Sections::executorsLabel),
          chart("scale-bounded-job-ratio.png", "All-to-all shuffle job (cold) against the sort shuffle's, with and"
              + " without the bound", "x", "with the bound", "without", m, scale("bounded.job.cold_ratio"),
              Sections::executorsLabel)).stream().filter(c -> !c.categories().isEmpty()).toList(), m, "");
      default -> new Section(fileName, fileName, List.of(), m, "");
    };
  }

  private static Section tpcds(List<Measurement> m) {
    List<Measurement> wall = new ArrayList<>();
    List<Measurement> wait = new ArrayList<>();
    List<Measurement> summary = new ArrayList<>();
    String scale = "";
    for (Measurement x : m) {
      Matcher q = TPCDS.matcher(x.name());
      if (q.matches()) {
        scale = q.group(1);
        if (q.group(3).equals("wall")) {
          wall.add(x);
        } else if (q.group(3).equals("fetch_wait")) {
          wait.add(x);
        }
      } else {
        summary.add(x);
      }
    }
    Function<Measurement, String> query = x -> {
      Matcher q = TPCDS.matcher(x.name());
      return q.matches() ? q.group(2) : x.name();
    };
    String at = scale.isEmpty() ? "" : " at " + scale.toUpperCase(java.util.Locale.ROOT).replace("SF", "SF ");
    List<BarChart> charts = List.of(
        chart("tpcds-queries.png", "TPC-DS query wall time" + at, "seconds", "RdmaShuffleManager", "sort shuffle",
            wall, x -> true, query),
        chart("tpcds-fetch-wait.png", "TPC-DS shuffle fetch wait per query" + at, "ms", "RdmaShuffleManager",
            "sort shuffle", wait, x -> true, query));
    return new Section("TPC-DS", "tpcds.json", charts, summary,
        "Every query's figures and result comparison: [tpcds.md](tpcds.md).");
  }

  /** The scale benchmark's figure {@code what} for every N ({@code scale.n<N>.<what>}). */
  private static Predicate<Measurement> scale(String what) {
    return x -> {
      Matcher s = SCALE.matcher(x.name());
      return s.matches() && s.group(2).equals(what);
    };
  }

  private static String executorsLabel(Measurement x) {
    Matcher s = SCALE.matcher(x.name());
    return s.matches() ? "N=" + s.group(1) : x.name();
  }

  static BarChart chart(String file, String title, String yTitle, String valueSeries, String baselineSeries,
      List<Measurement> m, Predicate<Measurement> keep, Function<Measurement, String> label) {
    List<String> categories = new ArrayList<>();
    List<Double> values = new ArrayList<>();
    List<Double> baselines = new ArrayList<>();
    for (Measurement x : m) {
      if (keep.test(x)) {
        categories.add(label.apply(x));
        values.add(x.value());
        baselines.add(x.baselineValue());
      }
    }
    return new BarChart(file, title, yTitle, valueSeries, baselineSeries, categories, values, baselines);
  }

  private static String withoutFirstPart(Measurement x) {
    int dot = x.name().indexOf('.');
    return dot < 0 ? x.name() : x.name().substring(dot + 1);
  }

  private static String strip(String s, String suffix) {
    return s.endsWith(suffix) ? s.substring(0, s.length() - suffix.length()) : s;
  }
}
