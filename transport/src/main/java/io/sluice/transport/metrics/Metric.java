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
    if (!name.matches("[a-zA-Z][a-zA-Z0-9_.]*")) {
      throw new IllegalArgumentException("metric name must be dotted letters, digits and _: '" + name + "'");
    }
  }

  public static Metric counter(String name, Unit unit, long value) {
    return new Metric(name, unit, Kind.COUNTER, value);
  }

  public static Metric gauge(String name, Unit unit, long value) {
    return new Metric(name, unit, Kind.GAUGE, value);
  }
}
