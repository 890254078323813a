package io.sluice.perf.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Measurement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SectionsTest {
  @Test
  void tpcdsChartsEveryQueryAndTablesOnlyTheTotals() {
    List<Measurement> m = List.of(
        new Measurement("tpcds.sf0.1.q1.wall", "s", 1, "sort_shuffle.tpcds.sf0.1.q1.wall", 2),
        new Measurement("tpcds.sf0.1.q1.fetch_wait", "ms", 3, "sort_shuffle.tpcds.sf0.1.q1.fetch_wait", 4),
        new Measurement("tpcds.sf0.1.q14a.wall", "s", 5, "sort_shuffle.tpcds.sf0.1.q14a.wall", 6),
        new Measurement("tpcds.sf0.1.q14a.shuffle_read", "MB", 5, "sort_shuffle.tpcds.sf0.1.q14a.shuffle_read", 6),
        new Measurement("tpcds.sf0.1.total.wall", "s", 6, "sort_shuffle.tpcds.sf0.1.total.wall", 8));
    Section s = Sections.of("tpcds.json", m);
    BarChart wall = s.charts().get(0);
    assertEquals(List.of("q1", "q14a"), wall.categories());
    assertEquals(List.of(1.0, 5.0), wall.values());
    assertEquals(List.of(2.0, 6.0), wall.baselines());
    assertTrue(wall.title().endsWith("at SF 0.1"), wall.title());
    assertEquals(List.of("q1"), s.charts().get(1).categories());
    assertEquals(List.of("tpcds.sf0.1.total.wall"), s.table().stream().map(Measurement::name).toList());
  }

  @Test
  void transportChartsThroughputOnly() {
    List<Measurement> m = List.of(new Measurement("tcp.read.1MiB.inflight8", "GB/s", 2, "socket.stream.1MiB", 2.5),
        new Measurement("tcp.read.4KiB.latency.p50", "us", 30, "socket.pingpong.4KiB.p50", 15));
    Section s = Sections.of("transport.json", m);
    assertEquals(List.of("tcp 1MiB.inflight8"), s.charts().get(0).categories());
    assertEquals(2, s.table().size());
  }

  @Test
  void scaleChartsConnectionsThreadsAndJobRatioByN() {
    List<Measurement> m = List.of(
        new Measurement("scale.n2.peer_connections.median", "count", 3, "sort_shuffle.scale.n2.peer_connections.median", 2),
        new Measurement("scale.n2.peer_connections.max", "count", 3, "sort_shuffle.scale.n2.peer_connections.max", 2),
        new Measurement("scale.n2.threads.median", "count", 48, "sort_shuffle.scale.n2.threads.median", 46),
        new Measurement("scale.n2.job.cold_ratio", "x", 0.7, "sort_shuffle.scale.n2.job.cold_ratio", 1),
        new Measurement("scale.n16.peer_connections.median", "count", 31, "sort_shuffle.scale.n16.peer_connections.median",
            30),
        new Measurement("scale.n16.transport.threads.median", "count", 12,
            "sort_shuffle.scale.n16.netty_shuffle.threads.median", 2));
    Section s = Sections.of("scale.json", m);
    assertEquals(List.of("scale-connections.png", "scale-threads.png", "scale-job-ratio.png"),
        s.charts().stream().map(BarChart::file).toList());
    assertEquals(List.of("N=2", "N=16"), s.charts().get(0).categories());
    assertEquals(List.of(3.0, 31.0), s.charts().get(0).values());
    assertEquals(List.of(2.0, 30.0), s.charts().get(0).baselines());
    assertEquals(List.of(48.0), s.charts().get(1).values());
    assertEquals(List.of(0.7), s.charts().get(2).values());
    assertEquals(6, s.table().size());
  }

  @Test
  void unknownFilesGetATableOnly() {
    Section s = Sections.of("other.json", List.of(new Measurement("a", "s", 1, "b", 2)));
    assertTrue(s.charts().isEmpty());
    assertEquals(1, s.table().size());
  }

  @Test
  void markdownShowsDrawnChartsTablesAndProblems() {
    Section s = Sections.of("spark-shuffle.json", List.of(
        new Measurement("spark_shuffle.warm.sort.128MB.wall", "s", 3, "sort_shuffle.warm.sort.128MB.wall", 4),
        new Measurement("spark_shuffle.warm.sort.128MB.wall_max", "s", 5, "sort_shuffle.warm.sort.128MB.wall_max", 6),
        new Measurement("spark_shuffle.encrypted.cold.sort.128MB.cpu_per_mib.threads.all", "ms/MiB", 30,
            "sort_shuffle.encrypted.cold.sort.128MB.cpu_per_mib.threads.all", 20)));
    assertEquals(List.of("warm.sort.128MB"), s.charts().get(0).categories());
    assertEquals(List.of("encrypted.cold.sort.128MB"), s.charts().get(1).categories());
    String md = ReportMarkdown.of(List.of(s), Set.of("spark-shuffle.png"), List.of("x.json could not be read"));
    assertTrue(md.contains("![Spark shuffle jobs: wall time (median)](spark-shuffle.png)"), md);
    assertFalse(md.contains("spark-shuffle-cpu.png"), "a chart that was not drawn is not shown: " + md);
    assertTrue(md.contains(
        "| spark_shuffle.warm.sort.128MB.wall | s | 3 | sort_shuffle.warm.sort.128MB.wall | 4 | 0.75 |"), md);
    assertTrue(md.contains("> x.json could not be read"), md);
    assertFalse(ReportMarkdown.of(List.of(s), Set.of(), List.of()).contains("!["));
  }

  @Test
  void drawsAPng(@TempDir Path dir) throws Exception {
    System.setProperty("java.awt.headless", "true");
    BarChart c = new BarChart("c.png", "t", "s", "a", "b", List.of("q1", "q2"), List.of(1.0, 2.0), List.of(2.0, 1.0));
    Path file = dir.resolve("c.png");
    Report.draw(c, file);
    byte[] png = Files.readAllBytes(file);
    assertTrue(png.length > 1000);
    assertEquals((byte) 0x89, png[0]);
    assertEquals('P', png[1]);
  }
}
