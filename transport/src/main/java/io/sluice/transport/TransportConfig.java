package io.sluice.transport;

import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.config.ConfigSource;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Where a transport gets its settings. Each integration adapts its own configuration (SparkConf,
 * Hadoop Configuration, a Flight server's options) to the one lookup {@link #get}; values are read
 * through the typed declarations of {@link io.sluice.transport.config.TransportKeys} ({@code
 * config.value(TransportKeys.IO_TIMEOUT_MS)}). The accessors taking a {@link TransportOption} read
 * through the same declarations, so a size read with {@link #intValue} accepts {@code 16m} as the
 * typed read does. Every invalid value is an {@link IllegalArgumentException} naming the key and
 * the value.
 */
@FunctionalInterface
public interface TransportConfig extends ConfigSource {
  /** The raw value of a key, if set. */
  @Override
  Optional<String> get(String key);

  /** The text of the option, trimmed, or its default; checked with the option's parser. */
  default String string(TransportOption option) {
    Object v = option.declaration().from(this);
    return v instanceof String s ? s : option.declaration().text(this);
  }

  /** A numeric option as an int. @throws IllegalArgumentException if it is not numeric or does not fit */
  default int intValue(TransportOption option) {
    long v = longValue(option);
    if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
      throw new IllegalArgumentException(option.key() + " out of int range: " + v);
    }
    return (int) v;
  }

  /** A numeric option (a number, size or duration in the key's unit). */
  default long longValue(TransportOption option) {
    return typed(option, Number.class).longValue();
  }

  default boolean booleanValue(TransportOption option) {
    return typed(option, Boolean.class);
  }

  private <T> T typed(TransportOption option, Class<T> kind) {
    ConfigKey<?> declaration = option.declaration();
    Object v = declaration.from(this);
    if (!kind.isInstance(v)) {
      throw new IllegalArgumentException(option.key() + " is not a " + kind.getSimpleName().toLowerCase(java.util.Locale.ROOT)
          + " setting (its value is " + v.getClass().getSimpleName() + ")");
    }
    return kind.cast(v);
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
