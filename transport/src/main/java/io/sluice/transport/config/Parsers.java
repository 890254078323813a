package io.sluice.transport.config;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one parser per kind of value. Sizes and durations use Spark's syntax, so a value written for
 * Spark means the same here: a whole number with an optional case-insensitive suffix. Every parser
 * receives trimmed text and throws {@link IllegalArgumentException} saying what was expected.
 * Stateless and thread safe.
 */
public final class Parsers {
  private static final Pattern WHOLE = Pattern.compile("([0-9]+)([a-z]*)");
  private static final Pattern SIGNED = Pattern.compile("(-?[0-9]+)([a-z]*)");
  private static final Pattern FRACTION = Pattern.compile("-?[0-9]*\\.[0-9]+[a-z]*");
  private static final Map<String, Long> BYTE_SUFFIXES = Map.ofEntries(
      Map.entry("b", 1L),
      Map.entry("k", 1L << 10), Map.entry("kb", 1L << 10),
      Map.entry("m", 1L << 20), Map.entry("mb", 1L << 20),
      Map.entry("g", 1L << 30), Map.entry("gb", 1L << 30),
      Map.entry("t", 1L << 40), Map.entry("tb", 1L << 40),
      Map.entry("p", 1L << 50), Map.entry("pb", 1L << 50));
  private static final Map<String, TimeUnit> TIME_SUFFIXES = Map.of(
      "us", TimeUnit.MICROSECONDS,
      "ms", TimeUnit.MILLISECONDS,
      "s", TimeUnit.SECONDS,
      "m", TimeUnit.MINUTES,
      "min", TimeUnit.MINUTES,
      "h", TimeUnit.HOURS,
      "d", TimeUnit.DAYS);
  private static final String SIZE_SYNTAX =
      "expected a whole number of bytes with an optional suffix b, k, kb, m, mb, g, gb, t, tb, p, pb";
  private static final String TIME_SYNTAX = "expected a whole number with an optional suffix us, ms, s, m, min, h, d";

  private Parsers() {}

  /** A byte count: a plain number is bytes; binary suffixes as Spark's byte strings ({@code 16m} = 16 MiB). */
  public static ValueParser<Long> bytes() {
    return text -> {
      String lower = text.toLowerCase(Locale.ROOT);
      Matcher m = WHOLE.matcher(lower);
      if (!m.matches()) {
        throw new IllegalArgumentException(FRACTION.matcher(lower).matches()
            ? "fractional sizes are not supported; " + SIZE_SYNTAX : SIZE_SYNTAX);
      }
      long multiplier = 1;
      if (!m.group(2).isEmpty()) {
        Long unit = BYTE_SUFFIXES.get(m.group(2));
        if (unit == null) {
          throw new IllegalArgumentException("unknown size suffix '" + m.group(2) + "'; " + SIZE_SYNTAX);
        }
        multiplier = unit;
      }
      try {
        return Math.multiplyExact(Long.parseLong(m.group(1)), multiplier);
      } catch (ArithmeticException | NumberFormatException e) {
        throw new IllegalArgumentException("size too large (more than " + Long.MAX_VALUE + " bytes)");
      }
    };
  }

  /**
   * A duration as a whole number of {@code unit}: a plain number is already in {@code unit}; a
   * suffix (us, ms, s, m or min, h, d, as Spark's time strings) converts, rounding down.
   */
  public static ValueParser<Long> duration(TimeUnit unit) {
    return text -> {
      String lower = text.toLowerCase(Locale.ROOT);
      Matcher m = SIGNED.matcher(lower);
      if (!m.matches()) {
        throw new IllegalArgumentException(FRACTION.matcher(lower).matches()
            ? "fractional durations are not supported; " + TIME_SYNTAX : TIME_SYNTAX);
      }
      TimeUnit given = unit;
      if (!m.group(2).isEmpty()) {
        given = TIME_SUFFIXES.get(m.group(2));
        if (given == null) {
          throw new IllegalArgumentException("unknown time suffix '" + m.group(2) + "'; " + TIME_SYNTAX);
        }
      }
      long amount;
      try {
        amount = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("duration too large");
      }
      long converted = unit.convert(amount, given);
      if (converted == Long.MAX_VALUE || converted == Long.MIN_VALUE) {
        throw new IllegalArgumentException("duration too large to count in " + unit.name().toLowerCase(Locale.ROOT));
      }
      return converted;
    };
  }

  /** {@code true} or {@code false}, in any case. */
  public static ValueParser<Boolean> bool() {
    return text -> {
      if (text.equalsIgnoreCase("true")) {
        return Boolean.TRUE;
      }
      if (text.equalsIgnoreCase("false")) {
        return Boolean.FALSE;
      }
      throw new IllegalArgumentException("expected true or false");
    };
  }

  /** A whole number that fits an int. */
  public static ValueParser<Integer> integer() {
    return text -> {
      try {
        return Integer.parseInt(text);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("expected a whole number between " + Integer.MIN_VALUE + " and "
            + Integer.MAX_VALUE);
      }
    };
  }

  /** A whole number that fits a long. */
  public static ValueParser<Long> longInteger() {
    return text -> {
      try {
        return Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("expected a whole number");
      }
    };
  }

  /**
   * Absolute paths separated by commas, each normalized ({@code a/../b} is {@code b}); empty text
   * is the empty list. Whether a path exists is for its user to check.
   */
  public static ValueParser<List<Path>> absolutePaths() {
    return text -> {
      List<Path> paths = new ArrayList<>();
      for (String part : text.split(",", -1)) {
        String p = part.trim();
        if (p.isEmpty()) {
          if (text.isEmpty()) {
            break;
          }
          throw new IllegalArgumentException("expected absolute paths separated by commas, found an empty entry");
        }
        Path path;
        try {
          path = Path.of(p);
        } catch (InvalidPathException e) {
          throw new IllegalArgumentException("'" + p + "' is not a path: " + e.getMessage());
        }
        if (!path.isAbsolute()) {
          throw new IllegalArgumentException("expected absolute paths separated by commas; '" + p + "' is relative");
        }
        paths.add(path.normalize());
      }
      return List.copyOf(paths);
    };
  }

  /** The text itself. */
  public static ValueParser<String> string() {
    return text -> text;
  }

  /** One of {@code choices}, in any case; the value is the choice as declared. */
  public static ValueParser<String> choice(String... choices) {
    List<String> allowed = List.of(choices);
    if (allowed.isEmpty()) {
      throw new IllegalArgumentException("a choice needs at least one value");
    }
    return text -> {
      for (String c : allowed) {
        if (c.equalsIgnoreCase(text)) {
          return c;
        }
      }
      throw new IllegalArgumentException("expected one of " + String.join(", ", allowed));
    };
  }
}
