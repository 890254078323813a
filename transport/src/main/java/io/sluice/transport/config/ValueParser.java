package io.sluice.transport.config;

/**
 * Turns the trimmed text of a value into its typed form. A parser knows nothing of keys: it throws
 * {@link IllegalArgumentException} saying what the text should have been, and {@link ConfigKey}
 * adds the key and the value to the message. Stateless and thread safe.
 */
@FunctionalInterface
public interface ValueParser<T> {
  /** @throws IllegalArgumentException when the text is not a value of this kind */
  T parse(String text);
}
