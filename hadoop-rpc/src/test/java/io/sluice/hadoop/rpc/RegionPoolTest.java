package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Regions are reused by size class, bounded, and all freed on close. */
class RegionPoolTest {
  private static Transport open() throws Exception {
    return Transports.open(TransportConfig.of(Map.of("sluice.transport.secret", "s", "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1")), MessageHandler.REJECT_ALL);
  }

  @Test
  void regionsAreReusedBySizeClassAndFreedOnClose() throws Exception {
    try (Transport transport = open()) {
      RegionPool pool = new RegionPool(transport, RegionPool.DESTINATION_IDLE_BYTES);
      RegisteredRegion small = pool.acquire(100);
      assertEquals(64 << 10, small.length(), "the smallest class is 64 KiB");
      RegisteredRegion mib = pool.acquire((1 << 20) - 3);
      assertEquals(1 << 20, mib.length());
      pool.release(mib);
      assertSame(mib, pool.acquire(1 << 20), "a released region of the class is reused");
      assertNotSame(mib, pool.acquire(1 << 20), "a region is handed out to one user at a time");
      pool.release(small);
      pool.close();
      assertTrue(small.refCnt() == 0, "closing the pool frees its idle regions");
    }
  }

  @Test
  void idleMemoryIsBoundedAndHugeRegionsAreNotKept() throws Exception {
    try (Transport transport = open()) {
      int before = transport.liveRegionCount();
      try (RegionPool pool = new RegionPool(transport, RegionPool.DESTINATION_IDLE_BYTES)) {
        RegisteredRegion huge = pool.acquire((64 << 20) + 1);
        pool.release(huge);
        assertEquals(0, huge.refCnt(), "regions above 64 MiB are freed at once");
        RegisteredRegion[] many = new RegisteredRegion[5];
        for (int i = 0; i < many.length; i++) {
          many[i] = pool.acquire(16 << 20);
        }
        for (RegisteredRegion r : many) {
          pool.release(r);
        }
        assertEquals(1, java.util.Arrays.stream(many).filter(r -> r.refCnt() == 0).count(),
            "four 16 MiB regions fill the 64 MiB idle budget; the fifth is freed");
      }
      assertEquals(before, transport.liveRegionCount());
    }
  }
}
