package io.sluice.transport.spi;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The warm-up a transport runs while it opens does the real operations: one that did not would
 * compile nothing, and fail silently, by design.
 */
class WarmUpTest {
  @Test
  void theHandshakesPublicKeyOperationsRunAndTheSignatureVerifies() {
    assertTrue(Handshake.warmUp());
  }
}
