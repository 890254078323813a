package io.sluice.perf.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The command line and the life of every benchmark program in {@code perf/}: options are declared
 * with picocli annotations on a small class of fields (the ones several commands share come from
 * {@link CommonOptions}), {@link #parse} fills it, and {@link #main}
 * turns the outcome into the process's exit status. {@code --help} prints the options picocli
 * knows from the annotations, so the help text and the parser cannot disagree.
 *
 * <p>Exit status: 0 after {@code --help} or a run that succeeded, 2 for a bad command line (the
 * message names the option), 1 when the run failed, or what the program returned. The process
 * exits even when library threads (gRPC, Spark, the transports) are still alive, so a finished
 * benchmark never hangs. Stateless and thread safe.
 */
public final class Cli {
  private Cli() {}

  /** The {@code --help} option; add it to a command with {@code @Mixin Cli.Help help;}. */
  public static final class Help {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show the options and exit.")
    boolean requested;
  }

  /** The command line asked for the usage text, which this carries. */
  public static final class HelpRequested extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HelpRequested(String usage) {
      super(usage, null, false, false);
    }

    /** The usage text. */
    public String usage() {
      return getMessage();
    }
  }

  /** A benchmark's work once its command line is known; returns the exit status. */
  @FunctionalInterface
  public interface Program<O> {
    int run(O options) throws IOException, TimeoutException, InterruptedException;
  }

  /** Work without a command line of its own, such as a benchmark's serving JVM; returns the exit status. */
  @FunctionalInterface
  public interface Body {
    int run() throws IOException, TimeoutException, InterruptedException;
  }

  /**
   * Fills {@code flags}, an instance of a picocli {@code @Command} class, from {@code args}.
   *
   * @throws IllegalArgumentException for an unknown option, a missing or unreadable value: the
   *     message names the option and ends with the usage text
   * @throws HelpRequested when {@code --help} was given
   */
  public static <T> T parse(T flags, String... args) {
    CommandLine line = commandLine(flags);
    try {
      line.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage() + "\n" + line.getUsageMessage(), e);
    }
    if (line.isUsageHelpRequested()) {
      throw new HelpRequested(line.getUsageMessage());
    }
    return flags;
  }

  /** The usage text of a picocli {@code @Command} class's instance. */
  public static String usage(Object flags) {
    return commandLine(flags).getUsageMessage();
  }

  private static CommandLine commandLine(Object flags) {
    return CommonOptions.describe(new CommandLine(flags));
  }

  /**
   * Runs a benchmark program: parses {@code args} with {@code parser}, runs {@code program}, and
   * exits the JVM with the status described in the class comment. Never returns.
   *
   * @param name what failure messages call the program, for example {@code "transport benchmark"}
   */
  public static <O> void main(String name, String[] args, Function<String[], O> parser, Program<O> program) {
    O options;
    try {
      options = parser.apply(args);
    } catch (HelpRequested h) {
      System.out.print(h.usage());
      System.out.flush();
      System.exit(0);
      return;
    } catch (IllegalArgumentException e) {
      System.err.println(name + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    run(name, () -> program.run(options));
  }

  /** Runs {@code body} and exits the JVM with its status, or 1 with the failure on standard error. Never returns. */
  public static void run(String name, Body body) {
    int status;
    try {
      status = body.run();
    } catch (IOException | TimeoutException | RuntimeException e) {
      status = failed(name, e, System.err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      status = failed(name, e, System.err);
    }
    System.out.flush();
    System.exit(status);
  }

  private static int failed(String name, Exception e, PrintStream err) {
    err.println(name + " failed: " + e);
    e.printStackTrace(err);
    return 1;
  }
}
