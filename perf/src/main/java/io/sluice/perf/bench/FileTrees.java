package io.sluice.perf.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removal of the folders benchmarks fill with generated data and logs. Stateless and thread safe. */
public final class FileTrees {
  private FileTrees() {}

  /** Deletes {@code root} and everything below it, deepest first; nothing happens when it does not exist. */
  public static void delete(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
