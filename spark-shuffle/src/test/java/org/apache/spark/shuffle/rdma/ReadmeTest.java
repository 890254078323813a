package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.TransportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's settings table names every key, with the default the code uses. */
class ReadmeTest {
  @Test
  void settingsTableIsComplete() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    for (RdmaShuffleOption o : RdmaShuffleOption.values()) {
      assertTrue(readme.contains("| `" + o.key() + "` | `" + o.defaultValue() + "` |"),
          "README lacks " + o.key() + " with default " + o.defaultValue());
    }
    for (TransportOption o : TransportOption.values()) {
      String key = SparkTransportConfig.SPARK_PREFIX + o.key().substring("sluice.transport.".length());
      assertTrue(readme.contains("| `" + key + "` |"), "README lacks " + key);
    }
  }
}
