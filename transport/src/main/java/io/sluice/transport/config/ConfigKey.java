package io.sluice.transport.config;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One configuration key: its full name, its default (as text, the way users write values), a
 * description for the key tables of the READMEs, the parser of its kind and the checks its value
 * must pass. Reading a key from a {@link ConfigSource} gives the typed value or the default; a
 * value the parser or a check refuses is an {@link IllegalArgumentException} naming the key and the
 * value, never a silent fallback to the default.
 *
 * <p>Immutable and thread safe. The default is parsed and checked when the key is declared, so a
 * bad declaration fails at class initialisation rather than at first use.
 */
public final class ConfigKey<T> {
  private final String key;
  private final String defaultValue;
  private final String description;
  private final ValueParser<T> parser;
  private final List<Check<? super T>> checks;
  private final T parsedDefault;
  /** Whether errors leave the value out, because it is a secret. */
  private final boolean hidden;

  private ConfigKey(String key, String defaultValue, String description, ValueParser<T> parser,
      List<Check<? super T>> checks) {
    this(key, defaultValue, description, parser, checks, false);
  }

  private ConfigKey(String key, String defaultValue, String description, ValueParser<T> parser,
      List<Check<? super T>> checks, boolean hidden) {
    if (key == null || key.isBlank()) {
      throw new IllegalArgumentException("a configuration key needs a name");
    }
    this.key = key;
    this.defaultValue = Objects.requireNonNull(defaultValue, "defaultValue");
    this.description = Objects.requireNonNull(description, "description");
    this.parser = Objects.requireNonNull(parser, "parser");
    this.checks = List.copyOf(checks);
    this.hidden = hidden;
    this.parsedDefault = parse(defaultValue);
  }

  /** Declares a key whose every parsed value is acceptable. */
  public static <T> ConfigKey<T> of(String key, String defaultValue, String description, ValueParser<T> parser) {
    return new ConfigKey<>(key, defaultValue, description, parser, List.of());
  }

  /** Declares a key whose parsed value must also pass {@code check}. */
  public static <T> ConfigKey<T> of(String key, String defaultValue, String description, ValueParser<T> parser,
      Check<? super T> check) {
    return new ConfigKey<>(key, defaultValue, description, parser, List.of(check));
  }

  /**
   * Declares a key whose value is a secret string (empty by default): it must pass {@code check},
   * and an error about it names the key, never the value.
   */
  public static ConfigKey<String> secret(String key, String description, Check<? super String> check) {
    return new ConfigKey<>(key, "", description, Parsers.string(), List.of(check), true);
  }

  /** The full name, e.g. {@code sluice.transport.maxMessageBytes}. */
  public String key() {
    return key;
  }

  /** The default as users would write it. */
  public String defaultValue() {
    return defaultValue;
  }

  public String description() {
    return description;
  }

  /** The value in {@code source}, or the default when it is not set. */
  public T from(ConfigSource source) {
    Optional<String> raw = source.get(key);
    return raw.isPresent() ? parse(raw.get()) : parsedDefault;
  }

  /** The trimmed text in {@code source}, or the default text; checked with the parser first. */
  public String text(ConfigSource source) {
    Optional<String> raw = source.get(key);
    if (raw.isEmpty()) {
      return defaultValue;
    }
    parse(raw.get());
    return raw.get().trim();
  }

  /** Whether {@code source} sets this key. */
  public boolean isSet(ConfigSource source) {
    return source.get(key).isPresent();
  }

  /** Parses and checks {@code raw} as a value of this key. @throws IllegalArgumentException naming the key and the value */
  public T parse(String raw) {
    if (raw == null) {
      throw new IllegalArgumentException(key + ": no value");
    }
    T value;
    try {
      value = parser.parse(raw.trim());
    } catch (IllegalArgumentException e) {
      throw invalid(raw, e.getMessage());
    }
    for (Check<? super T> c : checks) {
      Optional<String> problem = c.problem(value);
      if (problem.isPresent()) {
        throw invalid(raw, problem.get());
      }
    }
    return value;
  }

  private IllegalArgumentException invalid(String raw, String why) {
    String shown = hidden ? "(hidden, " + raw.length() + " characters)" : "'" + raw + "'";
    return new IllegalArgumentException("invalid value " + shown + " for " + key + ": " + why);
  }

  @Override
  public String toString() {
    return key;
  }

  /**
   * Warnings for the keys among {@code present} under {@code prefix} that are not in {@code known},
   * each naming the closest known key (fewest single-character edits), so a misspelt key does not
   * pass unnoticed. Empty when all are known.
   */
  public static List<String> unknown(Iterable<String> present, String prefix, java.util.Collection<String> known) {
    List<String> warnings = new java.util.ArrayList<>();
    for (String key : present) {
      if (key.startsWith(prefix) && !known.contains(key)) {
        String closest = null;
        int best = Integer.MAX_VALUE;
        for (String k : known) {
          int d = editDistance(key, k);
          if (d < best) {
            best = d;
            closest = k;
          }
        }
        warnings.add("unknown key " + key + (closest == null ? "" : "; did you mean " + closest + "?"));
      }
    }
    return warnings;
  }

  /** Levenshtein distance, two rows. */
  static int editDistance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
