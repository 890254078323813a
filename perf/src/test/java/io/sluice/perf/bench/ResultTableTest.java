package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultTableTest {
  private static String print(List<Measurement> results, Map<String, double[]> rounds) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      ResultTable.print(out, results, rounds);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyMeasurementBesideItsBaselineWithTheRatio() {
    String table = print(List.of(new Measurement("tcp.read.1MiB", "GB/s", 1.5, "socket.stream.1MiB", 2),
        new Measurement("calls", "calls/s", 12345.6, "stock.calls", 0)), Map.of());
    List<String> lines = table.lines().toList();
    assertEquals(3, lines.size(), table);
    assertTrue(lines.get(0).startsWith("measurement") && lines.get(0).endsWith("ratio"), table);
    assertTrue(lines.get(1).matches("tcp\\.read\\.1MiB +1\\.500 GB/s +socket\\.stream\\.1MiB +2\\.000 +0\\.75x"), table);
    assertTrue(lines.get(2).matches("calls +12345\\.6 calls/s +stock\\.calls +0\\.000 +-"), table);
  }

  @Test
  void roundsFollowTheRatio() {
    String table = print(List.of(new Measurement("a", "s", 2, "b", 4)),
        Map.of("a", new double[] {1, 2, 3}, "b", new double[] {4, 5}));
    assertTrue(table.lines().toList().get(1).endsWith("0.50x  1.000 2.000 3.000 | 4.000 5.000"), table);
  }
}
