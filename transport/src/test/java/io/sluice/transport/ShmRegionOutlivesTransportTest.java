package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A region still referenced when its shm transport closes (an Arrow buffer, a Spark block still
 * holding it) is released later, after the transport has unmapped its slot table: the release
 * frees the memory and touches nothing the close took away.
 */
class ShmRegionOutlivesTransportTest {
  @Test
  void aRegionReleasedAfterItsTransportClosedIsFreedSafely() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable());
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      RegisteredRegion held = owner.allocate(1 << 16);
      RegisteredRegion closedFirst = owner.allocate(4096);
      held.retain();
      closedFirst.retain();
      closedFirst.close();
      held.buffer().putLong(0, 42L);
      owner.close();
      assertFalse(held.isOpen(), "closing the transport revokes its regions");
      assertEquals(42L, held.buffer().getLong(0), "a referenced region's memory stays until its last release");
      // Each release below runs the region's free hook after the arena is gone.
      assertTrue(held.release());
      assertTrue(closedFirst.release());
    }
  }
}
