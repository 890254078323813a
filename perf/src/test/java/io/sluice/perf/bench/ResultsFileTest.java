package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultsFileTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void writesEveryFieldInTheDocumentedShape(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub").resolve("r.json");
    ResultsFile.write(file, List.of(
        new Measurement("tcp.read.1MiB.inflight8", "GB/s", 1.9345678, "socket.stream.1MiB", 2.5),
        new Measurement("tcp.read.4KiB.latency.p99", "us", 123456789.0, "socket.pingpong.4KiB.p99", 0.000012345)));
    String text = Files.readString(file);
    JsonNode list = JSON.readTree(text);
    assertEquals(2, list.size());
    JsonNode first = list.get(0);
    List<String> keys = new ArrayList<>();
    first.fieldNames().forEachRemaining(keys::add);
    assertEquals(List.of("name", "unit", "value", "baseline_name", "baseline_value"), keys);
    assertEquals("tcp.read.1MiB.inflight8", first.get("name").textValue());
    assertEquals("GB/s", first.get("unit").textValue());
    assertEquals(1.93457, first.get("value").doubleValue(), 0);
    assertEquals("socket.stream.1MiB", first.get("baseline_name").textValue());
    assertEquals(2.5, first.get("baseline_value").doubleValue(), 0);
    JsonNode second = list.get(1);
    assertEquals(123457000.0, second.get("value").doubleValue(), 0);
    assertEquals(0.000012345, second.get("baseline_value").doubleValue(), 1e-18);
    assertEquals("[\n  {\"name\": \"tcp.read.1MiB.inflight8\", \"unit\": \"GB/s\", \"value\": 1.93457,"
        + " \"baseline_name\": \"socket.stream.1MiB\", \"baseline_value\": 2.5},\n", text.substring(0, text.indexOf("},\n") + 3),
        "one object per line, as the committed files are written");
    try (var files = Files.list(file.getParent())) {
      assertEquals(1, files.count(), "no temporary file is left beside the results");
    }
  }

  @Test
  void anEmptyListIsAnEmptyJsonArray() throws Exception {
    JsonNode list = JSON.readTree(ResultsFile.encode(List.of()));
    assertTrue(list.isArray());
    assertEquals(0, list.size());
  }

  @Test
  void escapesQuotesBackslashesAndControlCharacters() throws Exception {
    String name = "a\"b\\c\nd\u0001e/é";
    String json = ResultsFile.encode(List.of(new Measurement(name, "u", 0, "b\tx", -1.5)));
    JsonNode m = JSON.readTree(json).get(0);
    assertEquals(name, m.get("name").textValue());
    assertEquals("b\tx", m.get("baseline_name").textValue());
    assertEquals(0.0, m.get("value").doubleValue(), 0);
    assertEquals(-1.5, m.get("baseline_value").doubleValue(), 0);
    assertFalse(json.contains("\u0001"));
  }

  @Test
  void numbersNeverUseExponentsOrNonFiniteValues() {
    assertEquals("0.000001", ResultsFile.number(1e-6).toPlainString());
    assertEquals("12300000000", ResultsFile.number(1.23e10).toPlainString());
    assertEquals("3", ResultsFile.number(3.0).toPlainString());
    assertTrue(ResultsFile.encode(List.of(new Measurement("n", "u", 1e-6, "b", 1.23e10)))
        .contains("\"value\": 0.000001, \"baseline_name\": \"b\", \"baseline_value\": 12300000000}"));
    assertThrows(IllegalArgumentException.class, () -> new Measurement("n", "u", Double.NaN, "b", 1));
    assertThrows(IllegalArgumentException.class,
        () -> new Measurement("n", "u", 1, "b", Double.POSITIVE_INFINITY));
  }

  @Test
  void rejectsDuplicateAndBlankNames() {
    Measurement m = new Measurement("same", "u", 1, "b", 1);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ResultsFile.encode(List.of(m, m)));
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
