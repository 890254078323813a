package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The module README's configuration table lists every {@link TransportOption} with its default. */
class ReadmeOptionsTest {
  @Test
  void everyOptionIsDocumentedWithItsDefault() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    for (TransportOption o : TransportOption.values()) {
      String shown = o.defaultValue().isEmpty() ? "(empty)" : "`" + o.defaultValue() + "`";
      String row = "| `" + o.key() + "` | " + shown + " | " + o.description() + " |";
      assertTrue(readme.contains(row), "README.md lacks the row: " + row);
    }
    long rows = readme.lines().filter(l -> l.startsWith("| `sluice.transport.")).count();
    assertEquals(TransportOption.values().length, rows, "README.md's table has rows for keys that are not options");
  }
}
