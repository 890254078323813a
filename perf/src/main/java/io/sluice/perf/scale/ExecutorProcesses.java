package io.sluice.perf.scale;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Finds an application's executor JVMs on this machine from {@code /proc}: the processes whose
 * command line runs {@code CoarseGrainedExecutorBackend} with the application's {@code --app-id},
 * by their {@code --executor-id}. On the simulated cluster the executors are children of the
 * Workers, in other network and mount namespaces but in this process namespace, so the driver sees
 * them. Stateless.
 */
final class ExecutorProcesses {
  private static final Path PROC = Path.of("/proc");
  private static final String BACKEND = "org.apache.spark.executor.CoarseGrainedExecutorBackend";

  private ExecutorProcesses() {}

  /** The executor id of a command line if it is an executor of {@code appId}. */
  static Optional<String> executorOf(List<String> argv, String appId) {
    if (!argv.contains(BACKEND) || !appId.equals(after(argv, "--app-id"))) {
      return Optional.empty();
    }
    return Optional.ofNullable(after(argv, "--executor-id"));
  }

  private static String after(List<String> argv, String option) {
    int i = argv.indexOf(option);
    return i >= 0 && i + 1 < argv.size() ? argv.get(i + 1) : null;
  }

  /** Every executor of {@code appId} running now: executor id to pid. */
  static Map<String, Long> of(String appId) throws IOException {
    Map<String, Long> found = new TreeMap<>();
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, p -> p.getFileName().toString().matches("[0-9]+"))) {
      for (Path dir : dirs) {
        byte[] cmdline;
        try {
          cmdline = Files.readAllBytes(dir.resolve("cmdline"));
        } catch (IOException e) {
          continue; // ended while listed
        }
        List<String> argv = Arrays.asList(new String(cmdline, StandardCharsets.UTF_8).split("\0"));
        executorOf(argv, appId).ifPresent(id -> found.put(id, Long.parseLong(dir.getFileName().toString())));
      }
    }
    return found;
  }
}
