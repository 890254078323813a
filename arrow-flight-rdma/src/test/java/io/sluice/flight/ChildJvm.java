package io.sluice.flight;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A test's main class run in a JVM of its own (this JVM's java, class path and {@code --add-opens}
 * flags, a 256 MiB heap), so that a test can kill it (SIGKILL) at a point it chooses and see what
 * the servers keep for it. Closing it kills the JVM if it still runs. One test thread uses it.
 */
public final class ChildJvm implements AutoCloseable {
  /** How long a child may take to print the line a test waits for: a JVM starting on a loaded machine. */
  private static final long LINE_SECONDS = 120;

  private final Process process;
  private final BufferedReader out;

  private ChildJvm(Process process) {
    this.process = process;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /** Starts {@code main} with {@code args}; its standard error is merged into its output. */
  public static ChildJvm start(Class<?> main, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx256m");
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens")) {
        cmd.add(arg);
      }
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    cmd.addAll(args);
    return new ChildJvm(new ProcessBuilder(cmd).redirectErrorStream(true).start());
  }

  /**
   * Reads the JVM's output up to the first line starting with {@code prefix} and returns that
   * line; fails with {@code endedFirst} and everything read before if the output ends first, or
   * the line has not come within {@link #LINE_SECONDS}.
   */
  public String awaitLine(String prefix, String endedFirst) throws IOException {
    // A child that hangs before its line is killed at the deadline: that ends its output, and so
    // the read below.
    CompletableFuture<Void> deadline = CompletableFuture.runAsync(process::destroyForcibly,
        CompletableFuture.delayedExecutor(LINE_SECONDS, TimeUnit.SECONDS));
    StringBuilder seen = new StringBuilder();
    String line;
    try {
      while ((line = out.readLine()) != null && !line.startsWith(prefix)) {
        seen.append(line).append('\n');
      }
    } finally {
      deadline.cancel(false);
    }
    String killed = deadline.isCancelled() ? "" : " (killed after " + LINE_SECONDS + " s)";
    assertTrue(line != null, endedFirst + killed + ": " + seen);
    return line;
  }

  /** Kills the JVM (SIGKILL) and fails unless it is gone within 30 s. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    assertTrue(process.waitFor(30, TimeUnit.SECONDS));
  }

  @Override
  public void close() {
    process.destroyForcibly();
  }
}
