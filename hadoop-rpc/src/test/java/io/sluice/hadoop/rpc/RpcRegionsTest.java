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
import io.sluice.transport.memory.RegisteredAllocator;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Regions are reused by size class, bounded, and all freed on close. */
class RpcRegionsTest {
  private static Transport open() throws Exception {
    return Transports.open(TransportConfig.of(Map.of("sluice.transport.secret", "rpc-regions-test-secret", "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1")), MessageHandler.REJECT_ALL);
  }

  @Test
  void regionsAreReusedBySizeClassAndFreedOnClose() throws Exception {
    try (Transport transport = open(); RegisteredAllocator root = RegisteredAllocator.root("rpc", transport)) {
      RegisteredRegion small;
      try (RegisteredAllocator pool = RpcRegions.pool(root, "destinations", RpcRegions.DESTINATION_IDLE_BYTES)) {
        small = pool.allocate(100);
        assertEquals(64 << 10, small.length(), "the smallest class is 64 KiB");
        RegisteredRegion mib = pool.allocate((1 << 20) - 3);
        assertEquals(1 << 20, mib.length());
        pool.release(mib);
        RegisteredRegion again = pool.allocate(1 << 20);
        assertSame(mib, again, "a released region of the class is reused");
        RegisteredRegion other = pool.allocate(1 << 20);
        assertNotSame(mib, other, "a region is handed out to one user at a time");
        pool.release(small);
        pool.release(again);
        pool.release(other);
      }
      assertTrue(small.refCnt() == 0, "closing the pool frees its idle regions");
    }
  }

  @Test
  void idleMemoryIsBoundedAndHugeRegionsAreNotKept() throws Exception {
    try (Transport transport = open()) {
      int before = transport.liveRegionCount();
      try (RegisteredAllocator root = RegisteredAllocator.root("rpc", transport);
          RegisteredAllocator pool = RpcRegions.pool(root, "destinations", RpcRegions.DESTINATION_IDLE_BYTES)) {
        RegisteredRegion huge = pool.allocate((64 << 20) + 1);
        pool.release(huge);
        assertEquals(0, huge.refCnt(), "regions above 64 MiB are freed at once");
        RegisteredRegion[] many = new RegisteredRegion[5];
        for (int i = 0; i < many.length; i++) {
          many[i] = pool.allocate(16 << 20);
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
