package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The executor JVMs a {@code local-cluster} application runs on this host, found by their command
 * lines, for tests that kill one. Every Spark line's tests share it. Stateless.
 */
final class ExecutorProcesses {
  private ExecutorProcesses() {}

  /**
   * Sends SIGKILL to the executor JVM of application {@code appId} with that executor id, waits
   * (at most 30 s) until it is gone and returns its pid; empty if no such process runs.
   */
  static Optional<Long> kill(String appId, String executorId) {
    for (ProcessHandle p : ProcessHandle.allProcesses().toList()) {
      List<String> args = commandLine(p.pid());
      int app = args.indexOf("--app-id");
      int exec = args.indexOf("--executor-id");
      if (args.contains("org.apache.spark.executor.CoarseGrainedExecutorBackend") && app >= 0 && exec >= 0
          && app + 1 < args.size() && exec + 1 < args.size()
          && appId.equals(args.get(app + 1)) && executorId.equals(args.get(exec + 1))) {
        p.destroyForcibly(); // SIGKILL on Unix
        try {
          p.onExit().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          throw new IllegalStateException("executor " + executorId + " (pid " + p.pid() + ") did not die", e);
        }
        return Optional.of(p.pid());
      }
    }
    return Optional.empty();
  }

  private static List<String> commandLine(long pid) {
    try {
      byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
      return List.of(new String(raw, StandardCharsets.UTF_8).split("\0"));
    } catch (IOException | RuntimeException e) {
      return List.of(); // gone, or not ours to read
    }
  }
}
