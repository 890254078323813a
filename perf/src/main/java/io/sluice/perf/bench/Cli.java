package io.sluice.perf.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The command line and the life of every benchmark program in {@code perf/}: a command names itself
 * and its results file in a {@link Command}, declares its own options with picocli {@code @Option}
 * annotations on a small class of fields, {@link #parse} fills it, and {@link #main} turns the
 * outcome into the process's exit status. Every command gets {@code -h/--help} and {@code --quick}
 * from here, then its own options in the order they are declared, then {@code --out}, the results
 * file, whose default is the same rule for every command ({@link Command#resultsFile}). {@code
 * --help} prints the options picocli knows, so the help text and the parser cannot disagree.
 *
 * <p>Exit status: 0 after {@code --help} or a run that succeeded, 2 for a bad command line (the
 * message names the option), 1 when the run failed, or what the program returned. The process
 * exits even when library threads (gRPC, Spark, the transports) are still alive, so a finished
 * benchmark never hangs. Stateless and thread safe.
 */
public final class Cli {
  private static final String QUICK = "--quick";
  private static final String OUT = "--out";

  private Cli() {}

  /**
   * What {@code --help} says about a command besides its options, and where its results go.
   *
   * @param name the command's name in the usage line
   * @param results the name of its results file (see {@link #resultsFile})
   * @param description what the command measures
   * @param quick what its {@code --quick} smoke run does; a smoke run proves the harness works and
   *     says nothing about speed
   */
  public record Command(String name, String results, String description, String quick) {
    public Command {
      for (String[] text : new String[][] {{"name", name}, {"results", results}, {"description", description},
          {"quick", quick}}) {
        if (text[1] == null || text[1].isBlank()) {
          throw new IllegalArgumentException("the " + text[0] + " of a command is missing");
        }
      }
    }

    /**
     * Where the results go unless {@code --out} says otherwise: {@code perf/results/<results>.json},
     * or for a smoke run {@code perf/target/<results>-quick.json}, beside the build output, so that
     * it never replaces a real run's results.
     */
    public Path resultsFile(boolean quick) {
      return quick ? Path.of("perf", "target", results + "-quick.json") : Path.of("perf", "results", results + ".json");
    }
  }

  /**
   * A command line that was read: the command's own options, whether {@code --quick} was given and
   * the results file. The command applies its other defaults and validation, which it knows; an
   * option not given keeps the value its field started with.
   */
  public record Parsed<T>(T options, boolean quick, Path out) {}

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
   * Fills {@code options}, an instance of a class of picocli {@code @Option} fields, from {@code args}.
   *
   * @throws IllegalArgumentException for an unknown option, a missing or unreadable value: the
   *     message names the option and ends with the usage text
   * @throws HelpRequested when {@code --help} was given
   */
  public static <T> Parsed<T> parse(Command command, T options, String... args) {
    CommandLine line = new CommandLine(spec(command, options));
    CommandLine.ParseResult result;
    try {
      result = line.parseArgs(args);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage() + "\n" + line.getUsageMessage(), e);
    }
    if (line.isUsageHelpRequested()) {
      throw new HelpRequested(line.getUsageMessage());
    }
    boolean quick = result.hasMatchedOption(QUICK);
    Path out = result.hasMatchedOption(OUT) ? result.matchedOptionValue(OUT, null) : command.resultsFile(quick);
    return new Parsed<>(options, quick, out);
  }

  /**
   * The Spark settings of a repeatable {@code --conf spark.KEY=VALUE} option, in key order.
   *
   * @param reserved keys the benchmark sets itself, each with the option that sets it instead
   * @throws IllegalArgumentException for a value without {@code =}, a key outside {@code spark.}, or
   *     a reserved key
   */
  public static SortedMap<String, String> sparkSettings(List<String> settings,
      Map<String, String> reserved) {
    SortedMap<String, String> out = new TreeMap<>();
    for (String kv : settings) {
      int eq = kv.indexOf('=');
      if (eq <= 0 || !kv.startsWith("spark.")) {
        throw new IllegalArgumentException("--conf takes a Spark setting as spark.KEY=VALUE, got '" + kv + "'");
      }
      String key = kv.substring(0, eq);
      if (reserved.containsKey(key)) {
        throw new IllegalArgumentException("--conf: " + key + " is the benchmark's to set (" + reserved.get(key) + ")");
      }
      out.put(key, kv.substring(eq + 1));
    }
    return out;
  }

  /**
   * {@code -h/--help} and {@code --quick} first, then the command's own options in declaration
   * order, then {@code --out}.
   */
  private static CommandSpec spec(Command command, Object options) {
    CommandSpec spec = CommandSpec.create().name(command.name());
    spec.usageMessage().description(command.description()).sortOptions(false);
    spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true)
        .description("Show the options and exit.").build());
    spec.addOption(OptionSpec.builder(QUICK).type(boolean.class).description(command.quick()).build());
    spec.addMixin("options", CommandSpec.forAnnotatedObject(options));
    spec.addOption(OptionSpec.builder(OUT).type(Path.class).paramLabel("FILE").description("Results file (default "
        + command.resultsFile(false) + ", with --quick " + command.resultsFile(true) + ").").build());
    return spec;
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
