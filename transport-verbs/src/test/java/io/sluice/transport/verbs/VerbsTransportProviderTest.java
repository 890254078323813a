package io.sluice.transport.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.Transports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery and availability of the verbs provider; runs with or without a device. */
class VerbsTransportProviderTest {
  @Test
  void transportsFindsTheProvider() {
    assertEquals("verbs", Transports.provider("verbs").name());
  }

  @Test
  void autoTriesVerbsFirstThenTcpAndNeverShmOnItsOwn() {
    List<String> names = Transports.providers().stream().map(TransportProvider::name).toList();
    assertEquals(List.of("verbs", "tcp", "shm"), names);
    assertTrue(Transports.provider("shm").autoPreference().isEmpty());
  }

  /**
   * Applications whose regions are each for one reader (Flight, Hadoop RPC) refuse what this
   * provider's key would share among peers: the check names this very key and lets only per-peer by.
   */
  @Test
  void applicationsThatKeepReadsPerPeerRefuseEveryOtherReadDomainsValue() {
    String key = io.sluice.transport.verbs.config.VerbsKeys.READ_DOMAINS.key();
    for (String value : List.of("shared", " SHARED ")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Transports.requireReadsKeptPerPeer(TransportConfig.of(Map.of(key, value)), "bodies are for one reader"));
      assertTrue(e.getMessage().startsWith(key + "="), e.getMessage());
    }
    Transports.requireReadsKeptPerPeer(TransportConfig.of(Map.of(key, "Per-Peer")), "bodies are for one reader");
    Transports.requireReadsKeptPerPeer(TransportConfig.of(Map.of()), "bodies are for one reader");
  }

  @Test
  void availabilityAgreesWithItsCause() {
    VerbsTransportProvider p = new VerbsTransportProvider();
    assertEquals(p.isAvailable(), p.unavailabilityCause().isEmpty());
    p.unavailabilityCause().ifPresent(cause -> {
      assertTrue(cause instanceof TransportUnavailableException, cause.toString());
      assertFalse(String.valueOf(cause.getMessage()).isBlank());
      TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
          () -> p.open(TransportConfig.of(Map.of("sluice.transport.secret", "verbs-provider-test-secret")), MessageHandler.REJECT_ALL));
      assertTrue(e.getMessage().contains("verbs"), e.getMessage());
    });
  }

  @Test
  void activePortsAreReadFromSysfs(@TempDir Path root) throws Exception {
    assertFalse(VerbsTransportProvider.anyActivePort(root.resolve("missing")));
    Path port = Files.createDirectories(root.resolve("rxe0/ports/1"));
    Files.writeString(port.resolve("state"), "1: DOWN\n");
    assertFalse(VerbsTransportProvider.anyActivePort(root));
    Path other = Files.createDirectories(root.resolve("mlx5_0/ports/1"));
    Files.writeString(other.resolve("state"), "4: ACTIVE\n");
    assertTrue(VerbsTransportProvider.anyActivePort(root));
  }
}
