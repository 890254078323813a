package io.sluice.perf.flight;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
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
 * The Flight benchmark's second JVM: {@link FlightBenchServer} started with this JVM's {@code
 * java} and class path. {@link #start} returns at once, so the server builds its table while
 * this JVM builds its own; {@link #awaitReady} waits for the announcement of its Flight servers
 * and table; {@link #drop} frees a table a put stored there; {@link #close()} closes its standard
 * input, which tells it to stop, and kills it if it has not stopped within a deadline. Its
 * standard error goes to ours. Extra JVM flags for it (a JFR recording, say) come from the
 * environment variable {@value #SERVER_OPTS_ENV}. Not thread safe.
 */
final class FlightServerProcess implements AutoCloseable {
  static final String SERVER_OPTS_ENV = "SLUICE_FLIGHT_SERVER_OPTS";
  /** Building a 2 GiB table takes a while on a busy 2-core machine. */
  private static final Duration START_DEADLINE = Duration.ofSeconds(180);
  private static final Duration COMMAND_DEADLINE = Duration.ofSeconds(60);
  private static final Duration STOP_DEADLINE = Duration.ofSeconds(30);
  /** Marks the end of the server's output in the line queue. */
  private static final String EOF = "\u0000eof";

  private final Process process;
  private final LinkedBlockingQueue<String> lines;
  private final Writer commands;
  private final long startedNanos = System.nanoTime();
  private ServerAnnouncement announcement;

  private FlightServerProcess(Process process, LinkedBlockingQueue<String> lines) {
    this.process = process;
    this.lines = lines;
    this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
  }

  /** The server's announcement, waiting for it the first time. */
  ServerAnnouncement awaitReady() throws IOException {
    if (announcement == null) {
      ServerAnnouncement.Parser parser = new ServerAnnouncement.Parser();
      long deadline = startedNanos + START_DEADLINE.toNanos();
      while (announcement == null) {
        announcement = parser.accept(poll(deadline, "starting")).orElse(null);
      }
    }
    return announcement;
  }

  static FlightServerProcess start(FlightBenchOptions o, List<String> providers, String secret) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags(o.tableBytes()));
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(FlightBenchServer.class.getName());
    command.add(Long.toString(o.tableBytes()));
    command.add(Long.toString(o.warmupBytes()));
    command.add(Integer.toString(o.batchRows()));
    command.addAll(providers);
    ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().put(LoopbackFlight.SECRET_ENV, secret);
    Process p = pb.start();
    LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> pump(p, lines), "flight-bench-server-stdout");
    reader.setDaemon(true);
    reader.start();
    return new FlightServerProcess(p, lines);
  }

  /**
   * Heap and direct-memory limits for the server: the served tables, a table a put stores (a gRPC
   * put's buffers are rounded up by the allocator), gRPC's buffers and the staging and landing
   * memory of the data plane; plus this JVM's module-opening flags.
   */
  private static List<String> jvmFlags(long tableBytes) {
    List<String> flags = new ArrayList<>();
    flags.add("-Xmx1g");
    flags.add("-XX:MaxDirectMemorySize=" + (4 * tableBytes + (2L << 30)));
    flags.add("-XX:+UseParallelGC");
    flags.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports") || arg.startsWith("-Dsluice.")) {
        flags.add(arg);
      }
    }
    String extra = System.getenv(SERVER_OPTS_ENV);
    if (extra != null && !extra.isBlank()) {
      flags.addAll(List.of(extra.trim().split("\\s+")));
    }
    return flags;
  }

  /** Frees the table {@code name} on every server of the process, waiting until it is done. */
  void drop(String name) throws IOException {
    commands.write(ServerAnnouncement.dropCommand(name) + "\n");
    commands.flush();
    long deadline = System.nanoTime() + COMMAND_DEADLINE.toNanos();
    while (true) {
      String line = poll(deadline, "dropping table " + name);
      if (ServerAnnouncement.droppedTable(line).filter(name::equals).isPresent()) {
        return;
      }
    }
  }

  private String poll(long deadline, String what) throws IOException {
    String line = poll(lines, deadline, what);
    if (line.equals(EOF)) {
      throw new IOException("Flight benchmark server exited while " + what + exitStatus(process));
    }
    return line;
  }

  private static String poll(LinkedBlockingQueue<String> lines, long deadline, String what) throws IOException {
    long left = deadline - System.nanoTime();
    String line;
    try {
      line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while " + what);
    }
    if (line == null) {
      throw new IOException("Flight benchmark server did not answer in time while " + what);
    }
    return line;
  }

  /** Moves the server's output lines to the queue for as long as it runs. */
  private static void pump(Process p, LinkedBlockingQueue<String> lines) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
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
      commands.close();
      if (!process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        process.waitFor(STOP_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
        throw new IOException("Flight benchmark server did not stop within " + STOP_DEADLINE.toSeconds()
            + " s; killed it");
      }
      if (process.exitValue() != 0) {
        throw new IOException("Flight benchmark server exited with status " + process.exitValue());
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while stopping the Flight benchmark server");
    }
  }
}
