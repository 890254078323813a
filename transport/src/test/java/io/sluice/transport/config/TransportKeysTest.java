package io.sluice.transport.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The transport's declarations: one list, named by {@link TransportOption}, and the untyped
 * accessors of {@link TransportConfig} read through the same parsers as the typed form.
 */
class TransportKeysTest {
  @Test
  void everyDeclarationIsListedOnceAndNamedByAnOption() throws IllegalAccessException {
    List<ConfigKey<?>> declared = new ArrayList<>();
    for (Field f : TransportKeys.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
        declared.add((ConfigKey<?>) f.get(null));
      }
    }
    assertEquals(declared.size(), TransportKeys.all().size());
    assertTrue(TransportKeys.all().containsAll(declared));
    List<ConfigKey<?>> options = new ArrayList<>();
    for (TransportOption o : TransportOption.values()) {
      options.add(o.declaration());
      assertTrue(o.key().startsWith(TransportKeys.PREFIX), o.key());
      assertEquals(o.declaration().defaultValue(), o.defaultValue());
      assertEquals(o.declaration().description(), o.description());
    }
    assertEquals(TransportKeys.all(), options);
  }

  @Test
  void sizesAndDurationsReadTheSameThroughEitherForm() {
    TransportConfig c = TransportConfig.of(Map.of("sluice.transport.maxMessageBytes", "16m",
        "sluice.transport.ioTimeoutMs", "2min", "sluice.transport.connectTimeoutMs", "1500"));
    assertEquals(16 << 20, c.intValue(TransportOption.MAX_MESSAGE_BYTES));
    assertEquals(16L << 20, c.longValue(TransportOption.MAX_MESSAGE_BYTES));
    assertEquals(16L << 20, c.value(TransportKeys.MAX_MESSAGE_BYTES));
    assertEquals(120_000L, c.longValue(TransportOption.IO_TIMEOUT_MS));
    assertEquals(120_000L, c.value(TransportKeys.IO_TIMEOUT_MS));
    assertEquals(1_500L, c.value(TransportKeys.CONNECT_TIMEOUT_MS));
    assertEquals("16m", c.string(TransportOption.MAX_MESSAGE_BYTES));
  }

  @Test
  void anInvalidValueIsRefusedByEveryAccessorNamingTheKeyAndValue() {
    TransportConfig c = TransportConfig.of(Map.of("sluice.transport.maxMessageBytes", "16q"));
    String expected = "invalid value '16q' for sluice.transport.maxMessageBytes: ";
    for (org.junit.jupiter.api.function.Executable read : List.<org.junit.jupiter.api.function.Executable>of(
        () -> c.intValue(TransportOption.MAX_MESSAGE_BYTES),
        () -> c.longValue(TransportOption.MAX_MESSAGE_BYTES),
        () -> c.string(TransportOption.MAX_MESSAGE_BYTES),
        () -> c.value(TransportKeys.MAX_MESSAGE_BYTES),
        () -> TransportKeys.validate(c))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, read);
      assertTrue(e.getMessage().startsWith(expected), e.getMessage());
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "maxMessageBytes | 2g             | must be between 1 and 2147483647",
      "port            | 70000          | must be between 0 and 65535",
      "ioThreads       | 0              | must be positive",
      "ioTimeoutMs     | 0s             | must be positive",
      "provider        | carrier-pigeon | expected one of auto, tcp, shm, verbs",
      "encryption      | yes            | expected true or false"})
  void rangesAndKindsAreChecked(String suffix, String value, String rule) {
    String key = TransportKeys.PREFIX + suffix;
    TransportConfig c = TransportConfig.of(Map.of(key, value));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TransportKeys.validate(c));
    assertEquals("invalid value '" + value + "' for " + key + ": " + rule, e.getMessage());
  }

  @Test
  void untypedAccessorsRefuseAKeyOfAnotherKind() {
    TransportConfig c = TransportConfig.of(Map.of());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> c.booleanValue(TransportOption.PORT));
    assertEquals("sluice.transport.port is not a boolean setting (its value is Integer)", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> c.longValue(TransportOption.SHM_DIR));
  }

  @Test
  void theDefaultsAreValidAndChoicesKeepOneSpelling() {
    TransportConfig c = TransportConfig.of(Map.of("sluice.transport.provider", "TCP"));
    TransportKeys.validate(c);
    assertEquals("tcp", c.string(TransportOption.PROVIDER));
    assertEquals(true, c.booleanValue(TransportOption.SHM_ENABLED));
    assertEquals(0, c.intValue(TransportOption.PORT));
  }

  @Test
  void transportKeysShareOnePrefix() {
    assertEquals("maxMessageBytes", TransportKeys.suffix(TransportKeys.MAX_MESSAGE_BYTES.key()));
    assertEquals("encryption.dataAtRest", TransportKeys.suffix(TransportKeys.DATA_ENCRYPTED_AT_REST.key()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransportKeys.suffix("sluice.flight.streamWindow"));
    assertTrue(e.getMessage().contains("sluice.flight.streamWindow"), e.getMessage());
  }

}
