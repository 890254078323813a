package io.sluice.transport.verbs.provider;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A peer loses its admission after more than LIMIT faults within the window; others keep theirs. */
class PeerFaultsTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final PeerFaults faults = new PeerFaults(now::get);

  @Test
  void moreThanTheLimitWithinTheWindowBarsThePeer() {
    for (int i = 0; i < PeerFaults.LIMIT; i++) {
      assertFalse(faults.record(7), "fault " + (i + 1));
    }
    assertFalse(faults.isBarred(7));
    assertTrue(faults.record(7));
    assertTrue(faults.isBarred(7));
    assertFalse(faults.isBarred(8), "another peer keeps its admission");
    assertFalse(faults.record(7), "barred once, reported once");
    assertTrue(faults.isBarred(7));
  }

  @Test
  void faultsSpreadBeyondTheWindowDoNotAddUp() {
    for (int i = 0; i < 4 * PeerFaults.LIMIT; i++) {
      now.addAndGet(PeerFaults.WINDOW_NANOS / PeerFaults.LIMIT + 1);
      faults.record(7);
    }
    assertFalse(faults.isBarred(7));
  }
}
