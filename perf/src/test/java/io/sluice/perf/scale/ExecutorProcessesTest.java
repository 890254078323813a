package io.sluice.perf.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ExecutorProcessesTest {
  private static final List<String> EXECUTOR = List.of("/usr/bin/java", "-Xmx384m", "-cp", "/x/*",
      "org.apache.spark.executor.CoarseGrainedExecutorBackend", "--driver-url", "spark://x", "--executor-id", "7",
      "--hostname", "10.77.0.11", "--cores", "1", "--app-id", "app-20261128180053-0000", "--worker-url", "spark://w");

  @Test
  void executorOfItsApplicationOnly() {
    assertEquals(Optional.of("7"), ExecutorProcesses.executorOf(EXECUTOR, "app-20261128180053-0000"));
    assertEquals(Optional.empty(), ExecutorProcesses.executorOf(EXECUTOR, "app-20261128180053-0001"));
    assertEquals(Optional.empty(), ExecutorProcesses.executorOf(List.of("/usr/bin/java", "-cp", "/x/*",
        "org.apache.spark.deploy.worker.Worker", "--app-id", "app-20261128180053-0000"), "app-20261128180053-0000"));
    assertEquals(Optional.empty(), ExecutorProcesses.executorOf(EXECUTOR.subList(0, 8), "app-20261128180053-0000"));
  }
}
