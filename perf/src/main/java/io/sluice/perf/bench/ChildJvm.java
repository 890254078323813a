package io.sluice.perf.bench;

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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A benchmark's second JVM: a main class started with this JVM's {@code java} and class path, the
 * module-opening flags and {@code -Dsluice.*} settings this JVM was given, and flags of its own.
 * The child announces itself with lines on its standard output, which {@link #await} reads against
 * a deadline; {@link #send} writes a command line to its standard input; {@link #close()} closes
 * that input, which is the child's signal to stop, waits for it with a deadline and kills it after
 * that. Its standard error goes to ours. A child never outlives its parent's intent: it stops when
 * its input ends, which also happens when the parent dies.
 *
 * <p>Not thread safe: one thread drives a child. A daemon thread of its own reads the child's
 * output into a queue, so a child never blocks on a full pipe.
 */
public final class ChildJvm implements AutoCloseable {
  /** Marks the end of the child's output in the line queue. */
  private static final String EOF = "\u0000eof";

  /**
   * What to start.
   *
   * @param name what messages call the child, for example {@code "benchmark server"}
   * @param mainClass the child's main class, on this JVM's class path
   * @param jvmFlags heap, direct-memory and other flags of the child
   * @param args the child's arguments
   * @param env environment variables added to this JVM's for the child (secrets go here, not in
   *     the arguments, which other users of the machine can read)
   * @param stopDeadline how long {@link #close()} waits for the child to exit before it kills it
   */
  public record Command(String name, Class<?> mainClass, List<String> jvmFlags, List<String> args,
      Map<String, String> env, Duration stopDeadline) {
    public Command {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mainClass, "mainClass");
      jvmFlags = List.copyOf(jvmFlags);
      args = List.copyOf(args);
      env = Map.copyOf(env);
      Objects.requireNonNull(stopDeadline, "stopDeadline");
    }
  }

  private final Command command;
  private final Process process;
  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final Writer input;
  private final long startedNanos = System.nanoTime();

  private ChildJvm(Command command, Process process) {
    this.command = command;
    this.process = process;
    this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = new Thread(this::pump, command.name() + "-stdout");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts the child; returns at once, before it has announced anything. */
  public static ChildJvm start(Command command) throws IOException {
    List<String> line = new ArrayList<>();
    line.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    line.addAll(command.jvmFlags());
    line.addAll(inheritedFlags());
    line.add("-cp");
    line.add(System.getProperty("java.class.path"));
    line.add(command.mainClass().getName());
    line.addAll(command.args());
    ProcessBuilder pb = new ProcessBuilder(line).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().putAll(command.env());
    return new ChildJvm(command, pb.start());
  }

  /** The flags of this JVM a child needs as well: opened modules and the project's settings. */
  static List<String> inheritedFlags() {
    List<String> flags = new ArrayList<>();
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens") || arg.startsWith("--add-exports") || arg.startsWith("-Dsluice.")) {
        flags.add(arg);
      }
    }
    return flags;
  }

  /** Reads the child's announcement line by line: empty until the lines so far say all it needs. */
  @FunctionalInterface
  public interface LineReader<T> {
    Optional<T> read(String line) throws IOException;
  }

  /** A deadline {@code d} after the child was started, for {@link #await}. */
  public long deadlineFromStart(Duration d) {
    return startedNanos + d.toNanos();
  }

  /** A deadline {@code d} from now, for {@link #await}. */
  public static long deadlineFromNow(Duration d) {
    return System.nanoTime() + d.toNanos();
  }

  /**
   * Feeds the child's output lines to {@code reader} until it returns a value, and returns that.
   *
   * @param deadlineNanos a {@link System#nanoTime()} by which the value must be there
   * @param what what the child is doing, for the messages
   * @throws IOException when the deadline passes, or the child exits first (with its status)
   */
  public <T> T await(LineReader<T> reader, long deadlineNanos, String what) throws IOException {
    while (true) {
      Optional<T> value = reader.read(nextLine(deadlineNanos, what));
      if (value.isPresent()) {
        return value.get();
      }
    }
  }

  /** Writes one line to the child's standard input. */
  public void send(String line) throws IOException {
    input.write(line + "\n");
    input.flush();
  }

  private String nextLine(long deadlineNanos, String what) throws IOException {
    long left = deadlineNanos - System.nanoTime();
    String line;
    try {
      line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while the " + command.name() + " was " + what);
    }
    if (line == null) {
      throw new IOException("the " + command.name() + " did not answer in time while " + what);
    }
    if (line.equals(EOF)) {
      throw new IOException("the " + command.name() + " exited while " + what + exitStatus());
    }
    return line;
  }

  /** Moves the child's output lines to the queue for as long as it runs. */
  private void pump() {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        lines.add(line);
      }
    } catch (IOException e) {
      // the process is gone; EOF below says so
    }
    lines.add(EOF);
  }

  private String exitStatus() {
    try {
      return process.waitFor(2, TimeUnit.SECONDS) ? " (exit status " + process.exitValue() + ")" : "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /**
   * Closes the child's input and waits for it to exit.
   *
   * @throws IOException if it had to be killed after the stop deadline, or exited with a status
   *     other than 0
   */
  @Override
  public void close() throws IOException {
    Duration deadline = command.stopDeadline();
    try {
      try {
        input.close();
      } catch (IOException e) {
        // the child is gone already; its exit status below says how it ended
      }
      if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS);
        throw new IOException("the " + command.name() + " did not stop within " + deadline.toSeconds()
            + " s; killed it");
      }
      if (process.exitValue() != 0) {
        throw new IOException("the " + command.name() + " exited with status " + process.exitValue());
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while stopping the " + command.name());
    }
  }
}
