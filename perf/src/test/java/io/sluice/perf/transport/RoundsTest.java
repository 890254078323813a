package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RoundsTest {
  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  private final Rounds rounds =
      new Rounds(BenchOptions.parse(), new PrintStream(printed, true, StandardCharsets.UTF_8));

  @Test
  void interleavesCellsAndReportsTheMedianRound() throws IOException {
    List<String> order = new ArrayList<>();
    Iterator<Double> a = List.of(5.0, 1.0, 3.0).iterator();
    Iterator<Double> b = List.of(2.0, 9.0, 4.0).iterator();
    Map<String, Rounds.ThroughputCell> cells = new LinkedHashMap<>();
    cells.put("a", (w, m) -> {
      order.add("a");
      return a.next();
    });
    cells.put("b", (w, m) -> {
      order.add("b");
      return b.next();
    });
    Map<String, Double> medians = rounds.throughput(cells);
    assertEquals(List.of("a", "b", "a", "b", "a", "b"), order);
    assertEquals(Map.of("a", 3.0, "b", 4.0), medians);
    String text = printed.toString(StandardCharsets.UTF_8);
    assertTrue(text.contains("rounds 5.000 1.000 3.000"), text);
  }

  @Test
  void latencyPoolsTheSamplesOfEveryRound() throws IOException {
    long[] next = {1_000};
    Map<String, Rounds.LatencyCell> cells = Map.of("c", (w, m, samples) -> {
      samples.add(next[0]);
      next[0] += 1_000;
    });
    LatencySamples s = rounds.latency(cells).get("c");
    assertEquals(3, s.count());
    assertEquals(2.0, s.micros(Percentile.P50), 0);
  }

  @Test
  void aFailingCellStopsTheRun() {
    Map<String, Rounds.ThroughputCell> cells = Map.of("bad", (w, m) -> {
      throw new IOException("READ failed");
    });
    IOException e = assertThrows(IOException.class, () -> rounds.throughput(cells));
    assertEquals("READ failed", e.getMessage());
  }
}
