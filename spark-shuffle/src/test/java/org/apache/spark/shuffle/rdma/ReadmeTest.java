package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's settings table names every key, with the default the code uses; its metrics table every metric. */
class ReadmeTest {
  @Test
  void settingsTableIsComplete() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    for (ConfigKey<?> o : RdmaShuffleOption.all()) {
      assertTrue(readme.contains("| `" + o.key() + "` | `" + o.defaultValue() + "` |"),
          "README lacks " + o.key() + " with default " + o.defaultValue());
    }
    java.util.List<ConfigKey<?>> transportKeys = new java.util.ArrayList<>(TransportKeys.all());
    transportKeys.addAll(io.sluice.transport.verbs.config.VerbsKeys.ALL);
    for (ConfigKey<?> o : transportKeys) {
      String key = SparkTransportConfig.SPARK_PREFIX + TransportKeys.suffix(o.key());
      assertTrue(readme.contains("| `" + key + "` |"), "README lacks " + key);
    }
  }

  @Test
  void metricsTableNamesEveryMetricOfItsOwn() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    java.util.Set<String> transport = new java.util.HashSet<>();
    new io.sluice.transport.metrics.TransportMetrics().snapshot().forEach(m -> transport.add(m.name()));
    for (String name : ShuffleMetrics.driverNames()) {
      if (!transport.contains(name)) {
        assertTrue(readme.contains("| `" + name + "` | "), "README's Metrics table lacks " + name);
      }
    }
  }
}
