package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** Provider selection by {@link Transports}. */
class TransportsTest {
  private static TransportConfig config(String provider) {
    return TransportConfig.of(Map.of("sluice.transport.provider", provider, "sluice.transport.secret", TransportTestSupport.SECRET,
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
  void providersAreTheRegisteredOnesInTheOrderAutoTriesThem() {
    List<String> names = Transports.providers().stream().map(TransportProvider::name).toList();
    assertTrue(names.indexOf("tcp") >= 0 && names.indexOf("tcp") < names.indexOf("shm"), names.toString());
    assertEquals(OptionalInt.empty(), Transports.provider("shm").autoPreference(), "auto never picks shm on its own");
    for (TransportProvider p : Transports.providers()) {
      assertEquals(p.isAvailable(), p.unavailabilityCause().isEmpty(), p.name());
    }
  }

  @Test
  void autoReadsSameHostPeersThroughSharedMemoryUnlessTurnedOff() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "no shared memory here");
    try (TransportHarness h = new TransportHarness("auto", Map.of())) {
      Map<String, String> off = Map.of(TransportOption.SHM_ENABLED.key(), "false");
      Transport shared = h.open(MessageHandler.REJECT_ALL);
      Transport plain = h.open(MessageHandler.REJECT_ALL, off);
      assertEquals("tcp", shared.provider());
      try (Connection c = TransportHarness.connect(h.open(MessageHandler.REJECT_ALL), shared)) {
        assertEquals("shm", c.dataPath());
      }
      try (Connection c = TransportHarness.connect(h.open(MessageHandler.REJECT_ALL, off), shared)) {
        assertEquals("tcp", c.dataPath(), "a reader with shm turned off reads over tcp");
      }
      try (Connection c = TransportHarness.connect(h.open(MessageHandler.REJECT_ALL), plain)) {
        assertEquals("tcp", c.dataPath(), "a peer without shm is read over tcp");
      }
      try (Connection c = TransportHarness.connect(
          h.open(MessageHandler.REJECT_ALL, Map.of(TransportOption.PROVIDER.key(), "tcp")), shared)) {
        assertEquals("tcp", c.dataPath(), "tcp chosen explicitly reads every peer over tcp");
      }
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
