package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.LoopbackTransport;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.memory.RegionSizes;
import io.sluice.transport.memory.RegisteredAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ReadDestinationsTest {
  private static final int MIN_CLASS = 64 * 1024;

  @RegisterExtension
  final LoopbackTransport loopback = new LoopbackTransport("pool-test");

  @Test
  void sizeClassesArePowersOfTwoFromTheMinimum() {
    RegionSizes sizes = ExecutorShuffleTransport.DESTINATION_SIZES;
    assertEquals(MIN_CLASS, sizes.regionSize(1));
    assertEquals(MIN_CLASS, sizes.regionSize(MIN_CLASS));
    assertEquals(2 * MIN_CLASS, sizes.regionSize(MIN_CLASS + 1));
    assertEquals(1 << 20, sizes.regionSize((1 << 20) - 5));
    assertEquals(Integer.MAX_VALUE - 64, sizes.regionSize(Integer.MAX_VALUE - 64));
  }

  @Test
  void releasedRegionsAreReusedUpToTheIdleBound() throws Exception {
    Transport t = loopback.transport();
    RegisteredAllocator pool = ExecutorShuffleTransport.destinations(t, "destinations", 3 * MIN_CLASS);
    RegisteredRegion a = pool.allocate(100);
    assertEquals(MIN_CLASS, a.length());
    pool.release(a);
    assertEquals(1, pool.idleCount());
    assertSame(a, pool.allocate(MIN_CLASS), "a released region of the class is reused");
    assertEquals(0, pool.idleCount());

    RegisteredRegion big = pool.allocate(4 * MIN_CLASS);
    pool.release(a);
    pool.release(big); // over the idle bound: freed, not kept
    assertFalse(big.isOpen());
    assertEquals(1, pool.idleCount());
    assertEquals(1, t.liveRegionCount());

    RegisteredRegion late = pool.allocate(2 * MIN_CLASS);
    assertEquals(2, t.liveRegionCount());
    pool.shutdown();
    assertFalse(a.isOpen());
    assertTrue(late.isOpen(), "a region still in a task's hands outlives the pool");
    assertEquals(1, t.liveRegionCount());
    pool.release(late); // after close: freed at once
    assertFalse(late.isOpen());
    assertTrue(t.liveRegionCount() == 0);
  }
}
