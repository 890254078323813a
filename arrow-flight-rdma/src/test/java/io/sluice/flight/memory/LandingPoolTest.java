package io.sluice.flight.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.LoopbackTransport;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.memory.RegisteredAllocator;
import io.sluice.transport.region.Region;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Landing memory: body sizes, reuse for bodies up to twice smaller, hand-off to Arrow. */
class LandingPoolTest {
  private static final int KIB = 1 << 10;
  private static final int MIB = 1 << 20;

  @RegisterExtension
  final LoopbackTransport loopback = new LoopbackTransport("landing-test");

  @Test
  void bodiesLandInRegionsOfTheirSizeClassThatNoPeerMayRead() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        LandingPool pool = new LandingPool(root, 256L * MIB)) {
      assertLands(pool, 100, 64 * KIB);
      assertLands(pool, 3 * MIB, 4 * MIB);
      assertLands(pool, 8 * MIB + 1, 9 * MIB);
      LandingPool.Landing l = pool.acquire(10);
      assertFalse(((Region) l.region()).readableBy(loopback.transport().nodeId() + 1), "landing memory is for no peer");
      l.release();
      IllegalArgumentException huge = assertThrows(IllegalArgumentException.class,
          () -> pool.acquire(Integer.MAX_VALUE + 1L));
      assertTrue(huge.getMessage().contains("over the 2 GiB a region can hold"), huge.getMessage());
    }
  }

  private static void assertLands(LandingPool pool, long length, long size) throws Exception {
    LandingPool.Landing l = pool.acquire(length);
    assertEquals(size, l.region().length(), "a body of " + length + " bytes");
    l.release();
  }

  @Test
  void idleRegionsServeBodiesUpToTwiceSmallerWithinTheIdleBound() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        LandingPool pool = new LandingPool(root, MIB + 64 * KIB)) {
      LandingPool.Landing first = pool.acquire(MIB);
      RegisteredRegion region = first.region();
      first.release();
      LandingPool.Landing half = pool.acquire(300 * KIB); // class 512 KiB: the 1 MiB region is at most twice that
      assertSame(region, half.region());
      half.release();
      LandingPool.Landing quarter = pool.acquire(200 * KIB); // class 256 KiB: 1 MiB is too big to tie up
      assertNotSame(region, quarter.region());
      LandingPool.Landing other = pool.acquire(MIB);
      assertSame(region, other.region());
      other.release();
      quarter.release();
      assertEquals(1, pool.idleCount(), "1 MiB + 256 KiB would pass the idle bound");
      assertTrue(region.isOpen());
    }
  }

  @Test
  void aRegionInArrowsHandsOutlivesItsPoolAndGoesAwayWithTheBuffer() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        BufferAllocator arrow = new RootAllocator()) {
      LandingPool pool = new LandingPool(root, MIB);
      LandingPool.Landing l = pool.acquire(1000);
      RegisteredRegion region = l.region();
      region.buffer().put(999, (byte) 0x5e);
      ArrowBuf buf = l.wrap(arrow, 1000);
      assertEquals(1000, arrow.getAllocatedMemory(), "Arrow's allocator accounts for the body");
      l.release(); // handed off already: nothing happens
      pool.close();
      assertTrue(region.isOpen());
      assertEquals((byte) 0x5e, buf.getByte(999), "the memory stays while a vector points into it");
      buf.close();
      assertEquals(0, region.refCnt(), "the buffer's last release frees a region the closed pool cannot keep");
      assertEquals(0, arrow.getAllocatedMemory());
      IllegalStateException closed = assertThrows(IllegalStateException.class, () -> pool.acquire(10));
      assertTrue(closed.getMessage().contains("allocator 'landing' is closed"), closed.getMessage());
    }
  }
}
