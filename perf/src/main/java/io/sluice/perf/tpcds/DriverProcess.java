package io.sluice.perf.tpcds;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@link TpcdsDriver} application in a child JVM, as the orchestrator sees it: commands go to
 * its standard input, answers come back as lines of its standard output that start with {@link
 * TpcdsDriver#PREFIX}; its standard error goes to a log file. Every wait has a deadline, and a
 * driver that exits or reports a fatal error ends every wait at once with a {@link
 * DriverException} that names the log. Used by one thread; {@link #close} stops the process.
 */
final class DriverProcess implements AutoCloseable {
  private static final String EOF = "\u0000eof";

  private final String name;
  private final Process process;
  private final Path log;
  private final Writer stdin;
  private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

  /** Thrown when a driver cannot answer: it died, reported a fatal error, or missed a deadline. */
  static final class DriverException extends IOException {
    private static final long serialVersionUID = 1L;

    DriverException(String message) {
      super(message);
    }
  }

  private DriverProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = new Thread(this::readAnswers, "tpcds-driver-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  static DriverProcess start(String name, List<String> command, Map<String, String> env, Path log)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().putAll(env);
    pb.redirectError(ProcessBuilder.Redirect.to(log.toFile()));
    return new DriverProcess(name, pb.start(), log);
  }

  String name() {
    return name;
  }

  void send(String command) throws DriverException {
    try {
      stdin.write(command + "\n");
      stdin.flush();
    } catch (IOException e) {
      throw new DriverException(name + " driver no longer takes commands (" + e.getMessage() + "); see " + log);
    }
  }

  /** The next answer, without the prefix. */
  String await(Duration timeout) throws DriverException, InterruptedException {
    String answer = answers.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (answer == null) {
      throw new DriverException(name + " driver did not answer within " + timeout.toSeconds() + " s; see " + log);
    }
    if (answer.equals(EOF)) {
      answers.add(EOF);
      String exit = process.isAlive() ? "closed its output" : "exited with status " + waitExit();
      throw new DriverException(name + " driver " + exit + "; see " + log);
    }
    if (answer.startsWith("fatal ")) {
      throw new DriverException(name + " driver failed: " + answer.substring(6) + "; see " + log);
    }
    return answer;
  }

  private int waitExit() {
    try {
      process.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return process.isAlive() ? -1 : process.exitValue();
  }

  private void readAnswers() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith(TpcdsDriver.PREFIX)) {
          answers.add(line.substring(TpcdsDriver.PREFIX.length()));
        }
      }
    } catch (IOException e) {
      // The process is gone; the end-of-output marker below tells the waiting thread.
    } finally {
      answers.add(EOF);
    }
  }

  /** Kills the process now (shutdown hooks). */
  void kill() {
    process.destroyForcibly();
  }

  /**
   * Asks the driver to stop, waits up to 60 s for it to stop its Spark context, then kills it;
   * then waits up to 30 s for the processes it had started (local-cluster's executors) to exit,
   * so that the next application's queries do not share the machine with them.
   */
  @Override
  public void close() {
    List<ProcessHandle> children = process.descendants().toList();
    try {
      if (process.isAlive()) {
        try {
          send("quit");
          stdin.close();
        } catch (IOException e) {
          // Already going away: destroyed below if it does not exit.
        }
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
          process.destroy();
          if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
          }
        }
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      for (ProcessHandle child : children) {
        while (child.isAlive() && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
