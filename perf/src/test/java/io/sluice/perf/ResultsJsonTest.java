package io.sluice.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsJsonTest {
  @Test
  void writesEveryFieldInTheDocumentedShape(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub").resolve("r.json");
    ResultsJson.write(file, List.of(
        new Measurement("tcp.read.1MiB.inflight8", "GB/s", 1.9345678, "socket.stream.1MiB", 2.5),
        new Measurement("tcp.read.4KiB.latency.p99", "us", 123456789.0, "socket.pingpong.4KiB.p99", 0.000012345)));
    List<?> list = (List<?>) JsonParser.parse(Files.readString(file));
    assertEquals(2, list.size());
    Map<?, ?> first = (Map<?, ?>) list.get(0);
    assertEquals(List.of("name", "unit", "value", "baseline_name", "baseline_value"), List.copyOf(first.keySet()));
    assertEquals("tcp.read.1MiB.inflight8", first.get("name"));
    assertEquals("GB/s", first.get("unit"));
    assertEquals(1.93457, (Double) first.get("value"), 0);
    assertEquals("socket.stream.1MiB", first.get("baseline_name"));
    assertEquals(2.5, (Double) first.get("baseline_value"), 0);
    Map<?, ?> second = (Map<?, ?>) list.get(1);
    assertEquals(123457000.0, (Double) second.get("value"), 0);
    assertEquals(0.000012345, (Double) second.get("baseline_value"), 1e-18);
    try (var files = Files.list(file.getParent())) {
      assertEquals(1, files.count(), "no temporary file is left beside the results");
    }
  }

  @Test
  void anEmptyListIsAnEmptyJsonArray() {
    assertEquals(List.of(), JsonParser.parse(ResultsJson.encode(List.of())));
  }

  @Test
  void escapesQuotesBackslashesAndControlCharacters() {
    String name = "a\"b\\c\nd\u0001e/é";
    String json = ResultsJson.encode(List.of(new Measurement(name, "u", 0, "b\tx", -1.5)));
    Map<?, ?> m = (Map<?, ?>) ((List<?>) JsonParser.parse(json)).get(0);
    assertEquals(name, m.get("name"));
    assertEquals("b\tx", m.get("baseline_name"));
    assertEquals(0.0, (Double) m.get("value"), 0);
    assertEquals(-1.5, (Double) m.get("baseline_value"), 0);
    assertFalse(json.contains("\u0001"));
  }

  @Test
  void numbersNeverUseExponentsOrNonFiniteValues() {
    assertEquals("0.000001", ResultsJson.number(1e-6));
    assertEquals("12300000000", ResultsJson.number(1.23e10));
    assertEquals("3", ResultsJson.number(3.0));
    assertThrows(IllegalArgumentException.class, () -> new Measurement("n", "u", Double.NaN, "b", 1));
    assertThrows(IllegalArgumentException.class,
        () -> new Measurement("n", "u", 1, "b", Double.POSITIVE_INFINITY));
  }

  @Test
  void rejectsDuplicateAndBlankNames() {
    Measurement m = new Measurement("same", "u", 1, "b", 1);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ResultsJson.encode(List.of(m, m)));
    assertTrue(e.getMessage().contains("same"));
    assertThrows(IllegalArgumentException.class, () -> new Measurement(" ", "u", 1, "b", 1));
    assertThrows(NullPointerException.class, () -> new Measurement("n", "u", 1, null, 1));
  }

  @Test
  void ratioComparesValueWithBaseline() {
    assertEquals(0.5, new Measurement("n", "u", 1, "b", 2).ratio(), 0);
    assertEquals(Double.POSITIVE_INFINITY, new Measurement("n", "u", 1, "b", 0).ratio(), 0);
  }

  @Test
  void byteSizeLabels() {
    assertEquals("4KiB", ByteSize.label(4096));
    assertEquals("1MiB", ByteSize.label(1 << 20));
    assertEquals("1536KiB", ByteSize.label(1536 * 1024));
    assertEquals("100B", ByteSize.label(100));
    assertThrows(IllegalArgumentException.class, () -> ByteSize.label(0));
  }
}
