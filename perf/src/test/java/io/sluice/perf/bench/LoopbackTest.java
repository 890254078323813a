package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LoopbackTest {
  @Test
  void everyRunHasASecretOfItsOwn() {
    String a = Loopback.newSecret();
    assertTrue(a.matches("[0-9a-f]{32}"), a);
    assertNotEquals(a, Loopback.newSecret());
  }

  @Test
  void tcpIsAvailableEverywhere() {
    assertDoesNotThrow(() -> Loopback.requireAvailable("tcp-aes", "tcp", "choose others with --providers"));
  }
}
