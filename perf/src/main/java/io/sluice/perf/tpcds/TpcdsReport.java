package io.sluice.perf.tpcds;

import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Spread;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Turns the outcomes of a TPC-DS run into the results file's measurements and the per-query
 * markdown table. Names are {@code tpcds.sf<scale>.<query>.<figure>} for RdmaShuffleManager, with
 * the sort shuffle's figure as baseline under {@code sort_shuffle.tpcds.sf<scale>.<query>.<figure>};
 * totals use {@code total} in place of the query. Stateless.
 */
final class TpcdsReport {
  /** A query whose wall-time ratio is above this is counted as slower than the sort shuffle. */
  static final double SLOW_QUERY_RATIO = 1.1;

  private TpcdsReport() {}

  /** Run-wide facts shown above the table. */
  record RunInfo(double scale, String master, int shufflePartitions, int selected, String budgetNote,
      double generationSeconds, double elapsedSeconds) {}

  static String scaleName(double scale) {
    return "sf" + BigDecimal.valueOf(scale).stripTrailingZeros().toPlainString();
  }

  static List<Measurement> measurements(RunInfo info, List<QueryOutcome> outcomes) {
    String p = "tpcds." + scaleName(info.scale()) + ".";
    String b = "sort_shuffle." + p;
    List<Measurement> m = new ArrayList<>();
    Totals t = totals(outcomes);
    for (QueryOutcome o : outcomes) {
      if (!o.measured()) {
        continue;
      }
      QueryRun r = o.rdma().orElseThrow();
      QueryRun s = o.sort().orElseThrow();
      String q = o.query() + ".";
      m.add(new Measurement(p + q + "wall", "s", r.wallSeconds(), b + q + "wall", s.wallSeconds()));
      m.add(new Measurement(p + q + "fetch_wait", "ms", r.fetchWaitMs(), b + q + "fetch_wait", s.fetchWaitMs()));
      m.add(new Measurement(p + q + "shuffle_read", "MB", mb(r.readBytes()), b + q + "shuffle_read",
          mb(s.readBytes())));
      m.add(new Measurement(p + q + "remote_read", "MB", mb(r.remoteBytes()), b + q + "remote_read",
          mb(s.remoteBytes())));
    }
    if (t.measured() > 0) {
      m.add(new Measurement(p + "total.wall", "s", t.rdmaWall(), b + "total.wall", t.sortWall()));
      m.add(new Measurement(p + "total.wall_ratio", "x", t.rdmaWall() / t.sortWall(), b + "total.wall_ratio", 1.0));
      m.add(new Measurement(p + "total.fetch_wait", "ms", t.rdmaWait(), b + "total.fetch_wait", t.sortWait()));
      m.add(new Measurement(p + "total.fetch_wait_ratio", "x", ratio(t.rdmaWait(), t.sortWait()),
          b + "total.fetch_wait_ratio", 1.0));
      m.add(new Measurement(p + "total.shuffle_read", "MB", mb(t.rdmaRead()), b + "total.shuffle_read",
          mb(t.sortRead())));
      m.add(new Measurement(p + "worst.wall_ratio", "x", t.worstRatio(), b + "worst.wall_ratio", 1.0));
      Spread r = ratioSpread(outcomes).orElseThrow();
      m.add(new Measurement(p + "query_ratio.min", "x", r.min(), b + "query_ratio.min", 1.0));
      m.add(new Measurement(p + "query_ratio.median", "x", r.median(), b + "query_ratio.median", 1.0));
      m.add(new Measurement(p + "query_ratio.max", "x", r.max(), b + "query_ratio.max", 1.0));
      for (boolean rdmaFirst : new boolean[] {false, true}) {
        Totals g = totals(outcomes.stream().filter(o -> o.rdmaFirst() == rdmaFirst).toList());
        if (g.measured() > 0) {
          String order = rdmaFirst ? "rdma_first" : "sort_first";
          m.add(new Measurement(p + "total.wall." + order, "s", g.rdmaWall(), b + "total.wall." + order, g.sortWall()));
        }
      }
    }
    m.add(new Measurement(p + "queries_compared", "queries", t.measured(), p + "queries_selected",
        info.selected()));
    m.add(new Measurement(p + "result_differences", "queries", t.differences(), p + "result_differences.expected", 0));
    return m;
  }

  static String markdown(RunInfo info, List<QueryOutcome> outcomes) {
    Totals t = totals(outcomes);
    StringBuilder md = new StringBuilder();
    md.append("# TPC-DS: RdmaShuffleManager beside Spark's sort shuffle\n\n");
    md.append(String.format(Locale.ROOT, "Scale factor %s, master `%s`, `spark.sql.shuffle.partitions=%d`, AQE on"
        + " (Spark's default). %d of %d queries compared", BigDecimal.valueOf(info.scale()).stripTrailingZeros()
            .toPlainString(), info.master(), info.shufflePartitions(), t.measured(), info.selected()));
    md.append(info.budgetNote().isEmpty() ? ".\n" : "; " + info.budgetNote() + ".\n");
    md.append(String.format(Locale.ROOT, "Whole run %.0f s%s.%n%n", info.elapsedSeconds(),
        info.generationSeconds() > 0
            ? String.format(Locale.ROOT, ", of which %.0f s generating the data (not cached yet)",
                info.generationSeconds())
            : " (data from the cache)"));
    if (t.measured() > 0) {
      md.append("| figure | RdmaShuffleManager beside the sort shuffle |\n|---|---|\n");
      md.append(String.format(Locale.ROOT, "| total wall time | %.2fx (%.1f s against %.1f s) |%n",
          t.rdmaWall() / t.sortWall(), t.rdmaWall(), t.sortWall()));
      md.append(String.format(Locale.ROOT, "| worst query | %.2fx (%s; %d queries above %.1fx) |%n", t.worstRatio(),
          t.worstQuery(), t.slowerThanNoted(), SLOW_QUERY_RATIO));
      md.append("| per-query ratio, min / median / max | " + ratioSpread(outcomes).orElseThrow().format("%.2f")
          + " |\n");
      for (String line : orderLines(outcomes)) {
        md.append("| ").append(line.replaceFirst(": ", " | ")).append(" |\n");
      }
      md.append(String.format(Locale.ROOT, "| fetch wait | %.2fx (%d ms against %d ms) |%n",
          ratio(t.rdmaWait(), t.sortWait()), t.rdmaWait(), t.sortWait()));
      md.append(String.format(Locale.ROOT, "| result differences | %d |%n%n", t.differences()));
    }
    md.append("| query | sort s | rdma s | ratio | fetch wait sort ms | fetch wait rdma ms | shuffle read MB"
        + " (sort / rdma) | remote MB (sort / rdma) | rows | first | result |\n");
    md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (QueryOutcome o : outcomes) {
      String result = o.error().map(e -> "failed: " + e)
          .orElse(o.difference().map(d -> "**differs**: " + d).orElse("equal"));
      result = result.replace("|", "\\|");
      if (o.measured()) {
        QueryRun s = o.sort().orElseThrow();
        QueryRun r = o.rdma().orElseThrow();
        md.append(String.format(Locale.ROOT, "| %s | %.2f | %.2f | %.2f | %d | %d | %.1f / %.1f | %.1f / %.1f | %d |"
            + " %s | %s |%n", o.query(), s.wallSeconds(), r.wallSeconds(), o.ratio(), s.fetchWaitMs(),
            r.fetchWaitMs(), mb(s.readBytes()), mb(r.readBytes()), mb(s.remoteBytes()), mb(r.remoteBytes()),
            r.rows(), o.rdmaFirst() ? "rdma" : "sort", result));
      } else {
        md.append("| ").append(o.query()).append(" | | | | | | | | | ").append(o.rdmaFirst() ? "rdma" : "sort")
            .append(" | ").append(result).append(" |\n");
      }
    }
    md.append("\nWall time is the query's `collect()`; fetch wait and bytes are Spark's shuffle read metrics"
        + " summed over the query's tasks. Results are compared as sorted rows: decimals, integers and strings"
        + " exactly, doubles within a relative " + ResultRows.DOUBLE_TOLERANCE + ".\n");
    return md.toString();
  }

  /** The spread of the per-query wall-time ratios (RdmaShuffleManager over the sort shuffle); empty without any. */
  static Optional<Spread> ratioSpread(List<QueryOutcome> outcomes) {
    double[] ratios = outcomes.stream().filter(QueryOutcome::measured).mapToDouble(QueryOutcome::ratio).toArray();
    return ratios.length == 0 ? Optional.empty() : Optional.of(Spread.of(ratios));
  }

  /**
   * The totals of the queries where the sort shuffle's application ran the batch first, and of
   * those where RdmaShuffleManager's did, one line each ({@code label: figures}).
   */
  static List<String> orderLines(List<QueryOutcome> outcomes) {
    List<String> lines = new ArrayList<>();
    for (boolean rdmaFirst : new boolean[] {false, true}) {
      Totals g = totals(outcomes.stream().filter(o -> o.rdmaFirst() == rdmaFirst).toList());
      if (g.measured() > 0) {
        lines.add(String.format(Locale.ROOT, "total wall time, %s first (%d queries): %.2fx (%.1f s against %.1f s)",
            rdmaFirst ? "rdma" : "sort", g.measured(), g.rdmaWall() / g.sortWall(), g.rdmaWall(), g.sortWall()));
      }
    }
    return lines;
  }

  /** Sums over the queries that ran under both managers. */
  record Totals(int measured, double sortWall, double rdmaWall, long sortWait, long rdmaWait, long sortRead,
      long rdmaRead, double worstRatio, String worstQuery, int slowerThanNoted, int differences) {}

  static Totals totals(List<QueryOutcome> outcomes) {
    int n = 0;
    double sortWall = 0;
    double rdmaWall = 0;
    long sortWait = 0;
    long rdmaWait = 0;
    long sortRead = 0;
    long rdmaRead = 0;
    double worst = 0;
    String worstQuery = "";
    int slower = 0;
    int differences = 0;
    for (QueryOutcome o : outcomes) {
      if (o.difference().isPresent()) {
        differences++;
      }
      if (!o.measured()) {
        continue;
      }
      n++;
      QueryRun s = o.sort().orElseThrow();
      QueryRun r = o.rdma().orElseThrow();
      sortWall += s.wallSeconds();
      rdmaWall += r.wallSeconds();
      sortWait += s.fetchWaitMs();
      rdmaWait += r.fetchWaitMs();
      sortRead += s.readBytes();
      rdmaRead += r.readBytes();
      if (o.ratio() > worst) {
        worst = o.ratio();
        worstQuery = o.query();
      }
      if (o.ratio() > SLOW_QUERY_RATIO) {
        slower++;
      }
    }
    return new Totals(n, sortWall, rdmaWall, sortWait, rdmaWait, sortRead, rdmaRead, worst, worstQuery, slower,
        differences);
  }

  /** value / baseline; a baseline of zero counts as 1 (fetch wait is whole milliseconds). */
  static double ratio(double value, double baseline) {
    return baseline == 0 ? (value == 0 ? 1.0 : value) : value / baseline;
  }

  private static double mb(long bytes) {
    return bytes / 1e6;
  }
}
