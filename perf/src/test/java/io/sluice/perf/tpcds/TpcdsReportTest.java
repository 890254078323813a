package io.sluice.perf.tpcds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.ResultsFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TpcdsReportTest {
  private static final TpcdsReport.RunInfo INFO = new TpcdsReport.RunInfo(0.1, "local-cluster[2,1,1024]", 16, 3,
      "", 0, 100);

  private static QueryOutcome outcome(String q, double sort, double rdma, long sortWait, long rdmaWait,
      Optional<String> difference) {
    return new QueryOutcome(q, Optional.of(new QueryRun(sort, 10, 2_000_000, 1_000_000, sortWait, 3_000_000)),
        Optional.of(new QueryRun(rdma, 10, 2_000_000, 1_000_000, rdmaWait, 3_000_000)), difference, Optional.empty(),
        false);
  }

  @Test
  void measurementsPerQueryAndTotals() {
    List<QueryOutcome> outcomes = List.of(outcome("q1", 2, 1, 100, 20, Optional.empty()),
        outcome("q2", 1, 1.5, 50, 10, Optional.of("row 1 differs")),
        new QueryOutcome("q3", Optional.empty(), Optional.empty(), Optional.empty(), Optional.of("sort: boom"), true));
    Map<String, Measurement> m = TpcdsReport.measurements(INFO, outcomes).stream()
        .collect(Collectors.toMap(Measurement::name, Function.identity()));
    assertEquals(1.0, m.get("tpcds.sf0.1.q1.wall").value());
    assertEquals(2.0, m.get("tpcds.sf0.1.q1.wall").baselineValue());
    assertEquals("sort_shuffle.tpcds.sf0.1.q1.wall", m.get("tpcds.sf0.1.q1.wall").baselineName());
    assertEquals(3.0, m.get("tpcds.sf0.1.q2.shuffle_read").value());
    assertEquals(2.5 / 3, m.get("tpcds.sf0.1.total.wall_ratio").value(), 1e-12);
    assertEquals(1.5, m.get("tpcds.sf0.1.worst.wall_ratio").value());
    assertEquals(30.0 / 150, m.get("tpcds.sf0.1.total.fetch_wait_ratio").value(), 1e-12);
    assertEquals(2, m.get("tpcds.sf0.1.queries_compared").value());
    assertEquals(3, m.get("tpcds.sf0.1.queries_compared").baselineValue());
    assertEquals(1, m.get("tpcds.sf0.1.result_differences").value());
    assertTrue(!m.containsKey("tpcds.sf0.1.q3.wall"));
    assertEquals(0.5, m.get("tpcds.sf0.1.query_ratio.min").value());
    assertEquals(1.0, m.get("tpcds.sf0.1.query_ratio.median").value());
    assertEquals(1.5, m.get("tpcds.sf0.1.query_ratio.max").value());
    assertEquals(2.5, m.get("tpcds.sf0.1.total.wall.sort_first").value());
    assertEquals(3.0, m.get("tpcds.sf0.1.total.wall.sort_first").baselineValue());
    assertFalse(m.containsKey("tpcds.sf0.1.total.wall.rdma_first"), "no query that rdma ran first was measured");
    ResultsFile.encode(TpcdsReport.measurements(INFO, outcomes));
  }

  @Test
  void markdownShowsTheRatiosAndListsEveryQuery() {
    String md = TpcdsReport.markdown(INFO, List.of(outcome("q1", 2, 1, 100, 20, Optional.empty()),
        outcome("q2", 1, 1.5, 50, 10, Optional.of("row 1 | differs")),
        new QueryOutcome("q3", Optional.empty(), Optional.empty(), Optional.empty(), Optional.of("sort: boom"), true)));
    assertTrue(md.contains("| total wall time | 0.83x (2.5 s against 3.0 s) |"), md);
    assertTrue(md.contains("| worst query | 1.50x (q2; 1 queries above 1.1x) |"), md);
    assertTrue(md.contains("| result differences | 1 |"), md);
    assertFalse(md.contains("goal") || md.contains("missed"), md);
    assertTrue(md.contains("| q1 | 2.00 | 1.00 | 0.50 | 100 | 20 |"), md);
    assertTrue(md.contains("**differs**: row 1 \\| differs"), md);
    assertTrue(md.contains("| q3 |") && md.contains("failed: sort: boom"), md);
    assertTrue(md.contains("2 of 3 queries compared"), md);
    assertTrue(md.contains("| per-query ratio, min / median / max | 0.50 / 1.00 / 1.50 |"), md);
    assertTrue(md.contains("| total wall time, sort first (2 queries) | 0.83x (2.5 s against 3.0 s) |"), md);
  }

  @Test
  void readsEveryFileOnce(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("store_sales"));
    Files.write(dir.resolve("store_sales").resolve("part-0.parquet"), new byte[3_000_000]);
    Files.write(dir.resolve("_SLUICE_TPCDS_COMPLETE"), new byte[7]);
    assertEquals(3_000_007, TpcdsBench.readOnce(dir));
  }

  @Test
  void batchesKeepTheOrderOfTheQueries() {
    assertEquals(List.of(List.of("q1", "q2"), List.of("q3", "q4"), List.of("q5")),
        TpcdsBench.batches(List.of("q1", "q2", "q3", "q4", "q5"), 2));
    assertEquals(List.of(List.of("q1")), TpcdsBench.batches(List.of("q1"), 26));
  }

  @Test
  void progressPieces() {
    assertEquals("42 s", Progress.duration(42.2));
    assertEquals("3m05s", Progress.duration(185));
    assertEquals("1h02m", Progress.duration(3720));
    assertEquals(30.0, Progress.eta(10, 1, 4));
    assertEquals(0.0, Progress.eta(10, 0, 4));
  }

  @Test
  void parsesADriverAnswer() {
    QueryRun r = QueryRun.parse("done q1 wall_ns=1500000000 rows=100 remote_bytes=5 local_bytes=6 fetch_wait_ms=7"
        + " write_bytes=8 tasks=9");
    assertEquals(new QueryRun(1.5, 100, 5, 6, 7, 8), r);
    assertEquals(11, r.readBytes());
  }
}
