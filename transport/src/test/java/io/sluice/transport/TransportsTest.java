package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Provider selection by {@link Transports}. */
class TransportsTest {
  private static TransportConfig config(String provider) {
    return TransportConfig.of(Map.of("sluice.transport.provider", provider, "sluice.transport.secret", "x",
        "sluice.transport.bindHost", "127.0.0.1", "sluice.transport.shm.enabled", "false"));
  }

  @Test
  void autoFallsBackToTcpWithoutAnRdmaProvider() throws Exception {
    try (Transport t = Transports.open(config("auto"), MessageHandler.REJECT_ALL)) {
      assertEquals("tcp", t.provider());
    }
  }

  @Test
  void explicitProviderIsUsed() throws Exception {
    try (Transport t = Transports.open(config("TCP"), MessageHandler.REJECT_ALL)) {
      assertEquals("tcp", t.provider());
    }
  }

  @Test
  void verbsWithoutTheNativeModuleSaysWhatToAdd() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Transports.open(config("verbs"), MessageHandler.REJECT_ALL));
    assertTrue(e.getMessage().contains("sluice-transport-verbs"), e.getMessage());
  }

  @Test
  void withWireEncryptionVerbsCarriesOnlyCiphertext() throws Exception {
    TransportConfig encrypted = config("verbs").with(Map.of(TransportOption.ENCRYPTION.key(), "true"));
    assertTrue(Transports.verbsRefusal(encrypted).orElseThrow().contains(TransportOption.DATA_ENCRYPTED_AT_REST.key()));
    TransportConfig atRest = encrypted.with(Map.of(TransportOption.DATA_ENCRYPTED_AT_REST.key(), "true"));
    assertEquals(java.util.Optional.empty(), Transports.verbsRefusal(atRest));
    assertEquals(java.util.Optional.empty(), Transports.verbsRefusal(config("verbs")));
    // Asked for verbs, but the bytes would cross the wire in clear: encrypted tcp instead.
    try (Transport t = Transports.open(encrypted, MessageHandler.REJECT_ALL)) {
      assertEquals("tcp", t.provider());
    }
  }

  @Test
  void unknownProviderIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Transports.open(config("carrier-pigeon"), MessageHandler.REJECT_ALL));
    assertTrue(e.getMessage().contains("carrier-pigeon"), e.getMessage());
  }

  @Test
  void missingSecretIsRejected() {
    TransportConfig noSecret = TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1"));
    assertThrows(IllegalArgumentException.class, () -> Transports.open(noSecret, MessageHandler.REJECT_ALL));
  }
}
