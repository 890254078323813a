package io.sluice.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ResultsJsonReadTest {
  @Test
  void readsWhatItWrites() {
    List<Measurement> m = List.of(new Measurement("a.b", "GB/s", 1.5, "c \"q\" \\ d", 2),
        new Measurement("x", "ms", 0, "y", 123456));
    assertEquals(m, ResultsJson.decode(ResultsJson.encode(m)));
    assertEquals(List.of(), ResultsJson.decode(ResultsJson.encode(List.of())));
  }

  @Test
  void acceptsAnyKeyOrderAndSpacing() {
    List<Measurement> m = ResultsJson.decode("[{\"unit\":\"s\",\"baseline_value\":-1e-3,\"name\":\"n\\u0041\","
        + "\"value\":2,\"baseline_name\":\"b\"}]");
    assertEquals(List.of(new Measurement("nA", "s", 2, "b", -0.001)), m);
  }

  @Test
  void rejectsOtherShapes() {
    assertThrows(IllegalArgumentException.class, () -> ResultsJson.decode("{}"));
    assertThrows(IllegalArgumentException.class, () -> ResultsJson.decode("[{\"name\": \"a\"}]"));
    assertThrows(IllegalArgumentException.class, () -> ResultsJson.decode("[] x"));
    assertThrows(IllegalArgumentException.class, () -> ResultsJson.decode("[{\"name\": true}]"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResultsJson.decode("[{\"name\""));
    assertTrue(e.getMessage().contains("offset"), e.getMessage());
  }

  /** The committed results files are all in the shared shape. */
  @Test
  void readsEveryCommittedResultsFile() throws Exception {
    Path dir = Path.of("results");
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).toList()) {
        assertTrue(!ResultsJson.read(f).isEmpty(), f.toString());
      }
    }
  }
}
