package io.sluice.transport.config;

import java.util.Optional;

/**
 * Where raw configuration values come from: one lookup by full key name. Each integration adapts
 * its own source (a map, SparkConf, a Hadoop Configuration) to this method; typed values are read
 * through a {@link ConfigKey}, which holds the default and the parser.
 *
 * <p>Implementations must be safe to call from any thread if the values are read from several.
 */
@FunctionalInterface
public interface ConfigSource {
  /** The raw value of a key, if set. */
  Optional<String> get(String key);

  /** The typed value of a key, or its default when not set. @throws IllegalArgumentException naming the key and the value */
  default <T> T value(ConfigKey<T> key) {
    return key.from(this);
  }
}
