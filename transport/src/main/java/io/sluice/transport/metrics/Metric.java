package io.sluice.transport.metrics;

/**
 * One value of a metrics snapshot: a stable dotted name (no namespace; each integration adds its
 * own, {@code sluice} in Spark), the unit it counts in, and whether it only grows.
 */
public record Metric(String name, Unit unit, Kind kind, long value) {
  /** A counter only grows while its source lives; a gauge is a level that goes up and down. */
  public enum Kind { COUNTER, GAUGE }

  /** What a value counts. */
  public enum Unit {
    BYTES("bytes"), COUNT("count"), MICROSECONDS("microseconds");

    private final String label;

    Unit(String label) {
      this.label = label;
    }

    /** The unit as the READMEs and the check print it. */
    public String label() {
      return label;
    }
  }

  public Metric {
    if (!isName(name)) {
      throw new IllegalArgumentException("metric name must be dotted letters, digits and _: '" + name + "'");
    }
  }

  /**
   * Whether {@code s} is an ASCII letter followed by ASCII letters, digits, {@code _} and {@code .}.
   * Checked by hand: a snapshot makes a few hundred metrics, and a regular expression per name
   * made taking one cost milliseconds in a cold JVM.
   */
  private static boolean isName(String s) {
    if (s.isEmpty() || !isAsciiLetter(s.charAt(0))) {
      return false;
    }
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!isAsciiLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.') {
        return false;
      }
    }
    return true;
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  public static Metric counter(String name, Unit unit, long value) {
    return new Metric(name, unit, Kind.COUNTER, value);
  }

  public static Metric gauge(String name, Unit unit, long value) {
    return new Metric(name, unit, Kind.GAUGE, value);
  }
}
