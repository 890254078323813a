package io.sluice.perf.transport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The benchmark's second JVM: {@link BenchServer} started with this JVM's {@code java} and class
 * path. {@link #start} returns once the server has announced its endpoints; {@link #close()}
 * closes its standard input, which tells it to stop, and kills it if it has not stopped within
 * a deadline. Its standard error goes to ours. Not thread safe.
 */
final class ServerProcess implements AutoCloseable {
  private static final Duration START_DEADLINE = Duration.ofSeconds(60);
  private static final Duration STOP_DEADLINE = Duration.ofSeconds(15);
  /** Marks the end of the server's output in the line queue. */
  private static final String EOF = "\u0000eof";

  private final Process process;
  private final ServerEndpoints endpoints;

  private ServerProcess(Process process, ServerEndpoints endpoints) {
    this.process = process;
    this.endpoints = endpoints;
  }

  ServerEndpoints endpoints() {
    return endpoints;
  }

  static ServerProcess start(int regionBytes, List<String> providers, String secret) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags(regionBytes));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(BenchServer.class.getName());
    command.add(Integer.toString(regionBytes));
    command.addAll(providers);
    ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().put(LoopbackTransports.SECRET_ENV, secret);
    Process p = pb.start();
    try {
      return new ServerProcess(p, awaitEndpoints(p));
    } catch (IOException | RuntimeException e) {
      p.destroyForcibly();
      throw e;
    }
  }

  /** Heap and direct-memory limits for the server, plus this JVM's module-opening flags. */
  private static List<String> jvmFlags(int regionBytes) {
    List<String> flags = new ArrayList<>();
    flags.add("-Xmx256m");
    flags.add("-XX:MaxDirectMemorySize=" + Math.max(1L << 30, 4L * regionBytes));
    flags.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports")
          || arg.startsWith("-Dsluice.")) {
        flags.add(arg);
      }
    }
    return flags;
  }

  private static ServerEndpoints awaitEndpoints(Process p) throws IOException {
    LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> pump(p, lines), "bench-server-stdout");
    reader.setDaemon(true);
    reader.start();
    ServerEndpoints.Parser parser = new ServerEndpoints.Parser();
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      String line;
      try {
        line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while starting the benchmark server");
      }
      if (line == null) {
        throw new IOException("benchmark server did not announce itself within " + START_DEADLINE.toSeconds() + " s");
      }
      if (line.equals(EOF)) {
        throw new IOException("benchmark server exited before it was ready" + exitStatus(p));
      }
      Optional<ServerEndpoints> ready = parser.accept(line);
      if (ready.isPresent()) {
        return ready.get();
      }
    }
  }

  /** Moves the server's output lines to the queue, and keeps draining after it is ready. */
  private static void pump(Process p, LinkedBlockingQueue<String> lines) {
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        lines.add(line);
      }
    } catch (IOException e) {
      // the process is gone; EOF below says so
    }
    lines.add(EOF);
  }

  private static String exitStatus(Process p) {
    try {
      return p.waitFor(2, TimeUnit.SECONDS) ? " (exit status " + p.exitValue() + ")" : "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  @Override
  public void close() throws IOException {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        throw new IOException("benchmark server did not stop within " + STOP_DEADLINE.toSeconds() + " s; killed it");
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while stopping the benchmark server");
    }
  }
}
