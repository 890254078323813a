package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DestinationPoolTest {
  private static Transport open() throws Exception {
    return Transports.open(TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
        "sluice.transport.secret", "pool-test", "sluice.transport.bindHost", "127.0.0.1")), MessageHandler.REJECT_ALL);
  }

  @Test
  void sizeClassesArePowersOfTwoFromTheMinimum() {
    assertEquals(DestinationPool.MIN_CLASS, DestinationPool.sizeClass(1));
    assertEquals(DestinationPool.MIN_CLASS, DestinationPool.sizeClass(DestinationPool.MIN_CLASS));
    assertEquals(2 * DestinationPool.MIN_CLASS, DestinationPool.sizeClass(DestinationPool.MIN_CLASS + 1));
    assertEquals(1 << 20, DestinationPool.sizeClass((1 << 20) - 5));
    assertEquals(Integer.MAX_VALUE - 64, DestinationPool.sizeClass(Integer.MAX_VALUE - 64));
  }

  @Test
  void releasedRegionsAreReusedUpToTheIdleBound() throws Exception {
    try (Transport t = open()) {
      DestinationPool pool = new DestinationPool(t, 3 * DestinationPool.MIN_CLASS);
      RegisteredRegion a = pool.acquire(100);
      assertEquals(DestinationPool.MIN_CLASS, a.length());
      pool.release(a);
      assertEquals(1, pool.idleCount());
      assertSame(a, pool.acquire(DestinationPool.MIN_CLASS), "a released region of the class is reused");
      assertEquals(0, pool.idleCount());

      RegisteredRegion big = pool.acquire(4 * DestinationPool.MIN_CLASS);
      pool.release(a);
      pool.release(big); // over the idle bound: freed, not kept
      assertFalse(big.isOpen());
      assertEquals(1, pool.idleCount());
      assertEquals(1, t.liveRegionCount());

      pool.close();
      assertFalse(a.isOpen());
      assertEquals(0, t.liveRegionCount());
      RegisteredRegion late = t.allocate(10);
      pool.release(late); // after close: freed at once
      assertFalse(late.isOpen());
      assertTrue(t.liveRegionCount() == 0);
    }
  }
}
