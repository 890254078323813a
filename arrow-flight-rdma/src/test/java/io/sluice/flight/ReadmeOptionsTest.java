package io.sluice.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.transport.config.ConfigKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The module README's key table is {@link FlightOption#all()}, key for key. */
class ReadmeOptionsTest {
  @Test
  void readmeTableMatchesTheOptions() throws Exception {
    List<String> documented = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("README.md"))) {
      if (line.startsWith("| `sluice.flight.")) {
        String[] cells = line.split("\\|");
        documented.add(cells[1].trim().replace("`", "") + "=" + cells[2].trim().replace("`", "") + " "
            + cells[3].trim());
      }
    }
    List<String> options = new ArrayList<>();
    for (ConfigKey<?> o : FlightOption.all()) {
      options.add(o.key() + "=" + o.defaultValue() + " " + o.description());
    }
    assertEquals(options, documented);
  }

  @Test
  void readmeMetricsTableNamesEveryServerMetricWithItsUnit() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String table = readme.substring(readme.indexOf("\n## Metrics\n"), readme.indexOf("\n## Keys\n"));
    for (io.sluice.transport.metrics.Metric m : new io.sluice.flight.server.FlightMetrics()
        .snapshot(java.util.Optional.empty())) {
      if (m.name().startsWith("transport.")) {
        continue; // the transport README's table
      }
      String row = table.lines().filter(l -> l.contains("`" + m.name() + "`")).findFirst()
          .orElseThrow(() -> new AssertionError("README's Metrics table lacks " + m.name()));
      org.junit.jupiter.api.Assertions.assertTrue(row.contains("| " + m.unit().label() + " |"),
          m.name() + " without its unit " + m.unit().label() + ": " + row);
    }
  }
}
