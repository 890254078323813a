package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The module README's configuration table lists every declaration of {@link TransportKeys} with
 * its default and description, and is the only such table (the root README links to it).
 */
class ReadmeOptionsTest {
  @Test
  void everyOptionIsDocumentedWithItsDefault() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    assertTrue(readme.contains("\n## Configuration\n"), "README.md has no Configuration section");
    for (ConfigKey<?> k : TransportKeys.all()) {
      String shown = k.defaultValue().isEmpty() ? "(empty)" : "`" + k.defaultValue() + "`";
      String row = "| `" + k.key() + "` | " + shown + " | " + k.description() + " |";
      assertTrue(readme.contains(row), "README.md lacks the row: " + row);
    }
    long rows = readme.lines().filter(l -> l.startsWith("| `" + TransportKeys.PREFIX)).count();
    assertEquals(TransportKeys.all().size(), rows, "README.md's table has rows for keys that are not options");
  }

  @Test
  void theTableIsNotRepeatedInTheRootReadme() throws IOException {
    String root = Files.readString(Path.of("..", "README.md"));
    assertEquals(0, root.lines().filter(l -> l.startsWith("| `" + TransportKeys.PREFIX)).count(),
        "the root README repeats transport keys; it links to transport/README.md#configuration instead");
  }
}
