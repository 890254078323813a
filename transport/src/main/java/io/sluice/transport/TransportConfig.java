package io.sluice.transport;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where a transport gets its settings. Each integration adapts its own configuration (SparkConf,
 * Hadoop Configuration, a Flight server's options) to this one method; typed accessors with the
 * defaults of {@link TransportOption} are built on it.
 */
@FunctionalInterface
public interface TransportConfig {
  /** The raw value of a key, if set. */
  Optional<String> get(String key);

  default String string(TransportOption option) {
    return get(option.key()).map(String::trim).orElse(option.defaultValue());
  }

  default int intValue(TransportOption option) {
    long v = longValue(option);
    if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
      throw new IllegalArgumentException(option.key() + " out of int range: " + v);
    }
    return (int) v;
  }

  default long longValue(TransportOption option) {
    String s = string(option);
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option.key() + " must be a number, got '" + s + "'", e);
    }
  }

  default boolean booleanValue(TransportOption option) {
    String s = string(option);
    if (s.equalsIgnoreCase("true")) {
      return true;
    }
    if (s.equalsIgnoreCase("false")) {
      return false;
    }
    throw new IllegalArgumentException(option.key() + " must be true or false, got '" + s + "'");
  }

  /** A configuration backed by a copy of the map. */
  static TransportConfig of(Map<String, String> values) {
    Map<String, String> copy = Map.copyOf(values);
    return key -> Optional.ofNullable(copy.get(key));
  }

  /** This configuration with some keys replaced. */
  default TransportConfig with(Map<String, String> overrides) {
    Map<String, String> copy = new HashMap<>(overrides);
    TransportConfig base = this;
    return key -> copy.containsKey(key) ? Optional.of(copy.get(key)) : base.get(key);
  }
}
