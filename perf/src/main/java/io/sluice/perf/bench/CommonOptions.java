package io.sluice.perf.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ListResourceBundle;
import java.util.Objects;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options every benchmark command spells and reads the same way, as picocli mixins: {@link
 * HelpAndQuick} ({@code --help} and {@code --quick}), {@link Rounds} ({@code --rounds N}) and {@link Out} ({@code --out
 * FILE}). What they do in detail differs between commands (what a smoke run shrinks, how many
 * rounds are the default, where results go by default), so a command declares one with its own
 * description:
 *
 * <pre>{@code
 * @Mixin
 * CommonOptions.Out out = new CommonOptions.Out("Results file (default perf/results/x.json).");
 * }</pre>
 *
 * <p>{@link Cli#parse} and {@link Cli#usage} show that description in {@code --help}. Defaults and
 * validation stay with the command, which knows them: an option not given reads as empty. A
 * mixin instance belongs to the one command object that declares it and is filled once, by one
 * parse; not thread safe.
 */
public final class CommonOptions {
  private CommonOptions() {}

  /** A shared option's description, owned by the command that declares it. */
  abstract static class Described {
    private final String key;
    private final String description;

    Described(String key, String description) {
      this.key = key;
      this.description = Objects.requireNonNull(description, "description");
      if (description.isBlank()) {
        throw new IllegalArgumentException("the description of " + key + " is blank");
      }
    }
  }

  /**
   * The two options every benchmark command starts with: {@code --help} ({@link Cli.Help}) and
   * {@code --quick}, a smoke run that proves the harness works and says nothing about speed.
   */
  public static final class HelpAndQuick extends Described {
    @Mixin
    Cli.Help help;

    @Option(names = "--quick", descriptionKey = "sluice.perf.quick")
    boolean quick;

    /** @param description what the smoke run does in this command, shown by {@code --help} */
    public HelpAndQuick(String description) {
      super("sluice.perf.quick", description);
    }

    /** Whether {@code --quick} was given. */
    public boolean quick() {
      return quick;
    }
  }

  /** {@code --rounds N}: how often every measured cell runs. */
  public static final class Rounds extends Described {
    @Option(names = "--rounds", paramLabel = "N", descriptionKey = "sluice.perf.rounds")
    Integer given;

    /** @param description the meaning and default of the rounds in this command, shown by {@code --help} */
    public Rounds(String description) {
      super("sluice.perf.rounds", description);
    }

    /** The rounds given on the command line, else {@code fallback}; the command validates the value. */
    public int orElse(int fallback) {
      return given != null ? given : fallback;
    }
  }

  /** {@code --out FILE}: where the results file ({@link ResultsFile}) goes. */
  public static final class Out extends Described {
    @Option(names = "--out", paramLabel = "FILE", descriptionKey = "sluice.perf.out")
    Path given;

    /** @param description the default results file of this command, shown by {@code --help} */
    public Out(String description) {
      super("sluice.perf.out", description);
    }

    /** The file given on the command line, else {@code fallback}. */
    public Path orElse(Path fallback) {
      return given != null ? given : fallback;
    }
  }

  /** Makes {@code --help} of {@code line} show each shared option's description from its declaring command. */
  static CommandLine describe(CommandLine line) {
    List<Object[]> texts = new ArrayList<>();
    for (CommandLine.Model.CommandSpec mixin : line.getCommandSpec().mixins().values()) {
      if (mixin.userObject() instanceof Described d) {
        texts.add(new Object[] {d.key, d.description});
      }
    }
    if (!texts.isEmpty()) {
      Object[][] contents = texts.toArray(new Object[0][]);
      line.setResourceBundle(new ListResourceBundle() {
        @Override
        protected Object[][] getContents() {
          return contents;
        }
      });
    }
    return line;
  }
}
