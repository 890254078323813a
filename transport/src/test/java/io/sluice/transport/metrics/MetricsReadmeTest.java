package io.sluice.transport.metrics;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's metrics table names every metric a snapshot holds, with its unit. */
class MetricsReadmeTest {
  @Test
  void everyMetricIsInTheReadmeWithItsUnit() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String table = readme.substring(readme.indexOf("\n## Metrics\n"), readme.indexOf("\n## Host check\n"));
    for (Metric m : new TransportMetrics().snapshot()) {
      String row = rowOf(table, m.name());
      assertTrue(row.contains("| " + m.unit().label() + " |") || row.contains("| as for READs |"),
          m.name() + " is listed without its unit (" + m.unit().label() + "): " + row);
    }
  }

  /**
   * The table row that names {@code name}, or the one of its pattern (reads.<path>.bytes,
   * ...le.<bound>us, encryption.engine.<engine>).
   */
  private static String rowOf(String table, String name) {
    String pattern = name.replaceFirst("^reads\\.(tcp|shm|verbs)\\.", "reads.<path>.")
        .replaceFirst("\\.le\\.\\d+us$", ".le.<bound>us")
        .replaceFirst("^encryption\\.engine\\.\\w+$", "encryption.engine.<engine>")
        .replaceFirst("^(connections\\.(refused|closed|connectFailed)|handshake\\.failed)\\.\\w+$", "$1.<reason>");
    String suffix = name.replaceFirst("^(connections\\.(refused|closed|connectFailed)|handshake\\.failed)\\.", "");
    for (String line : table.split("\n")) {
      if (line.startsWith("| `" + pattern + "`")) {
        if (pattern.endsWith("<reason>")) {
          assertTrue(line.contains("`" + suffix + "`"), "the row of " + pattern + " does not name " + suffix);
        }
        return line;
      }
      if (name.startsWith("requests.latency.") && line.startsWith("| `requests.latency.count`, ")) {
        return line;
      }
    }
    throw new AssertionError("README.md's Metrics table has no row for " + name + " (as " + pattern + ")");
  }
}
