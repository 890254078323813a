package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class ResultsFileReadTest {
  @Test
  void readsWhatItWrites() {
    List<Measurement> m = List.of(new Measurement("a.b", "GB/s", 1.5, "c \"q\" \\ d", 2),
        new Measurement("x", "ms", 0, "y", 123456));
    assertEquals(m, ResultsFile.decode(ResultsFile.encode(m)));
    assertEquals(List.of(), ResultsFile.decode(ResultsFile.encode(List.of())));
  }

  @Test
  void acceptsAnyKeyOrderAndSpacing() {
    List<Measurement> m = ResultsFile.decode("[{\"unit\":\"s\",\"baseline_value\":-1e-3,\"name\":\"n\\u0041\","
        + "\"value\":2,\"baseline_name\":\"b\"}]");
    assertEquals(List.of(new Measurement("nA", "s", 2, "b", -0.001)), m);
  }

  @Test
  void rejectsOtherShapes() {
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("{}"));
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("[{\"name\": \"a\"}]"));
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("[] x"));
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("[{\"name\": true}]"));
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("[{\"name\": \"a\", \"name\": \"b\"}]"));
    assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode(
        "[{\"name\":\"n\",\"unit\":\"s\",\"value\":1,\"baseline_name\":\"b\",\"baseline_value\":1,\"x\":1}]"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ResultsFile.decode("[{\"name\""));
    assertTrue(e.getMessage().contains("offset"), e.getMessage());
  }

  /** The committed results files are all in the shared shape. */
  @Test
  void readsEveryCommittedResultsFile() throws Exception {
    Path dir = Path.of("results");
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).toList()) {
        assertTrue(!ResultsFile.read(f).isEmpty(), f.toString());
      }
    }
  }
}
