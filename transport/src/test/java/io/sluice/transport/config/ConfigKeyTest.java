package io.sluice.transport.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Reading a declared key: defaults, trimming, checks, and errors that name the key and the value. */
class ConfigKeyTest {
  private static final ConfigKey<Long> SIZE = ConfigKey.of("test.sizeBytes", "4m", "A size.", Parsers.bytes(),
      Check.between(1, Integer.MAX_VALUE));
  private static final ConfigKey<Long> WAIT = ConfigKey.of("test.waitMs", "30s", "A wait.",
      Parsers.duration(TimeUnit.MILLISECONDS), Check.positive());
  private static final ConfigKey<Integer> COUNT = ConfigKey.of("test.count", "0", "A count.", Parsers.integer(),
      Check.notNegative());

  private static ConfigSource source(Map<String, String> values) {
    return key -> Optional.ofNullable(values.get(key));
  }

  @Test
  void anUnsetKeyHasItsDefaultAndASetOneIsTrimmedAndParsed() {
    ConfigSource empty = source(Map.of());
    assertEquals(4L << 20, SIZE.from(empty));
    assertEquals(30_000L, empty.value(WAIT));
    assertEquals("4m", SIZE.text(empty));
    assertFalse(SIZE.isSet(empty));

    ConfigSource set = source(Map.of("test.sizeBytes", " 16m ", "test.waitMs", "250"));
    assertEquals(List.of(16L << 20, 250L, "16m", true),
        List.of(set.value(SIZE), set.value(WAIT), SIZE.text(set), SIZE.isSet(set)));
  }

  @Test
  void aValueTheParserRefusesNamesTheKeyAndTheValue() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> source(Map.of("test.sizeBytes", "16q")).value(SIZE));
    assertEquals("invalid value '16q' for test.sizeBytes: unknown size suffix 'q'; expected a whole number of bytes"
        + " with an optional suffix b, k, kb, m, mb, g, gb, t, tb, p, pb", e.getMessage());
    IllegalArgumentException text = assertThrows(IllegalArgumentException.class,
        () -> SIZE.text(source(Map.of("test.sizeBytes", "lots"))));
    assertTrue(text.getMessage().startsWith("invalid value 'lots' for test.sizeBytes: "), text.getMessage());
  }

  @Test
  void aValueACheckRefusesNamesTheKeyTheValueAndTheRule() {
    assertEquals("invalid value '0' for test.waitMs: must be positive",
        assertThrows(IllegalArgumentException.class, () -> WAIT.parse("0")).getMessage());
    assertEquals("invalid value '-1' for test.count: must not be negative",
        assertThrows(IllegalArgumentException.class, () -> COUNT.parse("-1")).getMessage());
    assertEquals("invalid value '2g' for test.sizeBytes: must be between 1 and 2147483647",
        assertThrows(IllegalArgumentException.class, () -> SIZE.parse("2g")).getMessage());
    assertEquals((long) Integer.MAX_VALUE, SIZE.parse("2147483647b"));
    assertEquals("test.count: no value", assertThrows(IllegalArgumentException.class, () -> COUNT.parse(null)).getMessage());
  }

  @Test
  void aBadDefaultFailsTheDeclaration() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConfigKey.of("test.flag", "yes", "A flag.", Parsers.bool()));
    assertEquals("invalid value 'yes' for test.flag: expected true or false", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ConfigKey.of(" ", "1", "No name.", Parsers.integer()));
    assertThrows(IllegalArgumentException.class, () -> Check.between(2, 1));
  }

  @Test
  void theDefaultIsParsedOnce() {
    ConfigKey<String> name = ConfigKey.of("test.name", "x", "A name.", Parsers.string());
    ConfigSource empty = source(Map.of());
    assertSame(name.from(empty), name.from(empty));
    assertEquals("test.name", name.toString());
    assertEquals("A name.", name.description());
    assertEquals("x", name.defaultValue());
  }
}
