package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.config.ConfigKey;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's key table lists every engine key with its default. */
class ReadmeKeysTest {
  @Test
  void everyKeyIsInTheReadmeWithItsDefault() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    for (ConfigKey<?> option : SluiceRpcOption.all()) {
      String row = "| `" + option.key() + "` | `" + option.defaultValue() + "` |";
      assertTrue(readme.contains(row), "README.md lacks the row starting " + row);
    }
  }
}
