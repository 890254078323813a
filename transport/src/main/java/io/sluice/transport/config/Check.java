package io.sluice.transport.config;

import java.util.Optional;

/**
 * A rule a parsed value must satisfy beyond its kind, such as being positive. Returns what is
 * wrong, if anything; {@link ConfigKey} turns that into an error naming the key and the value.
 * Stateless and thread safe.
 */
@FunctionalInterface
public interface Check<T> {
  /** Why the value is not acceptable, or empty if it is. */
  Optional<String> problem(T value);

  /** Greater than zero. */
  static Check<Number> positive() {
    return v -> v.longValue() > 0 ? Optional.empty() : Optional.of("must be positive");
  }

  /** Zero or more. */
  static Check<Number> notNegative() {
    return v -> v.longValue() >= 0 ? Optional.empty() : Optional.of("must not be negative");
  }

  /** Between {@code min} and {@code max}, both included. */
  static Check<Number> between(long min, long max) {
    if (min > max) {
      throw new IllegalArgumentException("empty range " + min + ".." + max);
    }
    return v -> v.longValue() >= min && v.longValue() <= max
        ? Optional.empty()
        : Optional.of("must be between " + min + " and " + max);
  }
}
