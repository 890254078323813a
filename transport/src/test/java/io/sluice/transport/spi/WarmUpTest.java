package io.sluice.transport.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The warm-ups a transport runs while it opens do the real operations: each one that did not would
 * compile nothing, and fail silently, by design.
 */
class WarmUpTest {
  @Test
  void theHandshakesPublicKeyOperationsRunAndTheSignatureVerifies() {
    assertTrue(Handshake.warmUp());
  }

  @Test
  void everyRecordIsSealedAndOpenedBackIntact() {
    assertEquals(RecordLayer.WARM_UP_RECORDS, RecordLayer.warmUp());
  }
}
