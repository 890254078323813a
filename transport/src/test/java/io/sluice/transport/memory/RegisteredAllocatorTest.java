package io.sluice.transport.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.region.Region;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The allocator tree over a real tcp transport: registration through the transport, limits of a
 * child and its parent, reuse, waiting with a deadline, accounting, and a close that names what
 * is still out. Every allocator is opened in try-with-resources, so one that leaks fails the test.
 */
class RegisteredAllocatorTest {
  private static final int KIB64 = 64 << 10;
  private static final long MS = 1_000_000L;

  @TempDir
  Path shmDir;

  private Transport transport;

  @BeforeEach
  void open() throws Exception {
    transport = Transports.open(TransportConfig.of(TransportTestSupport.baseConfig("tcp", shmDir.toString())),
        MessageHandler.REJECT_ALL);
  }

  @AfterEach
  void close() {
    transport.close();
  }

  private static AllocatorOptions pooled(long limit, long idleBytes) {
    return AllocatorOptions.DEFAULTS.withLimit(limit).withReuse(RegionSizes.powersOfTwo(KIB64, 1 << 20), idleBytes);
  }

  @Test
  void regionsAreRegisteredByTheTransportForTheAllocatorsReader() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport);
        RegisteredAllocator granted = root.newChild("granted", AllocatorOptions.DEFAULTS.withReader(Transport.GRANTED_ONLY))) {
      RegisteredRegion any = root.allocate(100);
      RegisteredRegion only = granted.allocate(10);
      assertEquals(100, any.length(), "exact sizes by default");
      assertEquals(2, transport.liveRegionCount());
      assertTrue(assertInstanceOf(Region.class, any).readableBy(42));
      assertFalse(assertInstanceOf(Region.class, only).readableBy(42), "registered for no peer until a grant");
      root.release(any);
      granted.release(only);
      assertFalse(any.isOpen(), "nothing is kept idle without reuse");
      assertEquals(0, transport.liveRegionCount());
    }
  }

  @Test
  void releasedRegionsAreReusedByClassUpToTheIdleBound() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport);
        RegisteredAllocator pool = root.newChild("pool", pooled(Long.MAX_VALUE, 2 * KIB64))) {
      RegisteredRegion a = pool.allocate(100);
      assertEquals(KIB64, a.length());
      pool.release(a);
      assertEquals(1, pool.idleCount());
      assertSame(a, pool.allocate(KIB64), "a released region of the class is reused");
      RegisteredRegion c = pool.allocate(1);
      assertNotSame(a, c, "a region out is not handed out twice");
      RegisteredRegion b = pool.allocate(KIB64 + 1);
      assertEquals(2 * KIB64, b.length());
      assertEquals(3, transport.liveRegionCount());
      pool.release(a);
      pool.release(c);
      pool.release(b); // would pass the idle bound: freed
      assertFalse(b.isOpen());
      assertTrue(a.isOpen() && c.isOpen());
      assertEquals(2, pool.idleCount());
      assertEquals(2 * KIB64, pool.allocatedBytes(), "idle regions stay accounted for");
      RegisteredRegion huge = pool.allocate((1 << 20) + 1);
      assertEquals((1 << 20) + 1, huge.length(), "above the largest class: exactly the length");
      pool.release(huge);
      assertFalse(huge.isOpen(), "regions above the largest class are never kept");
      RegisteredRegion late = pool.allocate(KIB64);
      assertSame(a, late, "the longest idle region of the class goes first");
      pool.free(late);
      assertFalse(late.isOpen(), "a freed region is never reused");
      assertEquals(1, pool.idleCount());
    }
    assertEquals(0, transport.liveRegionCount(), "closing frees the idle regions");
  }

  @Test
  void aChildIsBoundByItsOwnLimitAndItsParents() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport, AllocatorOptions.DEFAULTS.withLimit(3 * KIB64));
        RegisteredAllocator child = root.newChild("child", AllocatorOptions.DEFAULTS.withLimit(2 * KIB64));
        RegisteredAllocator sibling = root.newChild("sibling", AllocatorOptions.DEFAULTS)) {
      IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class, () -> child.allocate(2 * KIB64 + 1));
      assertTrue(tooBig.getMessage().contains("limit of 'child' (131072 bytes)"), tooBig.getMessage());
      IllegalArgumentException overRoot =
          assertThrows(IllegalArgumentException.class, () -> sibling.allocate(3 * KIB64 + 1));
      assertTrue(overRoot.getMessage().contains("limit of 'root' (196608 bytes)"), overRoot.getMessage());

      RegisteredRegion c1 = child.allocate(KIB64);
      RegisteredRegion c2 = child.allocate(KIB64);
      MemoryLimitException childFull = assertThrows(MemoryLimitException.class, () -> child.allocate(1));
      assertTrue(childFull.getMessage().contains("allocator 'child' holds 131072 of its 131072 bytes"),
          childFull.getMessage());
      RegisteredRegion s1 = sibling.allocate(KIB64);
      MemoryLimitException rootFull = assertThrows(MemoryLimitException.class, () -> sibling.allocate(1));
      assertTrue(rootFull.getMessage().contains("allocator 'root' holds 196608 of its 196608 bytes"),
          rootFull.getMessage());

      assertEquals(2 * KIB64, child.allocatedBytes());
      assertEquals(3 * KIB64, root.allocatedBytes(), "a parent counts its children's regions");
      child.release(c1);
      child.release(c2);
      sibling.release(s1);
      assertEquals(0, root.allocatedBytes());
      assertEquals(3 * KIB64, root.peakBytes());
      assertEquals(2 * KIB64, child.peakBytes());
    }
  }

  @Test
  void aClassLargerThanTheLimitRegistersTheExactLength() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport);
        RegisteredAllocator small = root.newChild("small", pooled(KIB64 + 10, Long.MAX_VALUE))) {
      RegisteredRegion r = small.allocate(KIB64 + 5);
      assertEquals(KIB64 + 5, r.length(), "the class of 128 KiB would not fit the limit");
      small.release(r);
    }
  }

  @Test
  void aWaiterGetsRoomWhenARegionComesBackAndTimesOutOtherwise() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport, AllocatorOptions.DEFAULTS.withLimit(2 * KIB64));
        RegisteredAllocator a = root.newChild("a", pooled(Long.MAX_VALUE, Long.MAX_VALUE));
        RegisteredAllocator b = root.newChild("b", AllocatorOptions.DEFAULTS)) {
      RegisteredRegion first = a.allocate(KIB64);
      RegisteredRegion second = a.allocate(KIB64);

      long start = System.nanoTime();
      TimeoutException timeout = assertThrows(TimeoutException.class, () -> b.allocate(KIB64, System.nanoTime() + 200 * MS));
      assertTrue(System.nanoTime() - start >= 200 * MS, "waited until the deadline");
      assertTrue(timeout.getMessage().contains("allocator 'root' holds 131072 of its 131072 bytes"), timeout.getMessage());

      CompletableFuture<RegisteredRegion> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return b.allocate(KIB64, System.nanoTime() + TransportTestSupport.DEADLINE.toNanos());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      TransportTestSupport.eventually("the allocation waits", TransportTestSupport.DEADLINE, root::hasWaiters);
      assertFalse(waiting.isDone());
      a.release(first); // a would keep it idle, but someone waits: it is freed for room
      RegisteredRegion got = waiting.get(TransportTestSupport.DEADLINE.toSeconds(), TimeUnit.SECONDS);
      assertFalse(first.isOpen());
      assertEquals(0, a.idleCount());
      a.release(second);
      b.release(got);
    }
  }

  @Test
  void aWaiterElsewhereDoesNotStopReuseWhereFreeingCannotHelpIt() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport);
        RegisteredAllocator full = root.newChild("full", AllocatorOptions.DEFAULTS.withLimit(KIB64));
        RegisteredAllocator other = root.newChild("other", pooled(Long.MAX_VALUE, Long.MAX_VALUE))) {
      RegisteredRegion taken = full.allocate(KIB64);
      CompletableFuture<RegisteredRegion> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return full.allocate(1, System.nanoTime() + TransportTestSupport.DEADLINE.toNanos());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      TransportTestSupport.eventually("the allocation waits", TransportTestSupport.DEADLINE, full::hasWaiters);
      assertTrue(root.hasWaiters(), "a parent sees the waits below it");
      assertFalse(other.hasWaiters());
      RegisteredRegion r = other.allocate(1);
      other.release(r);
      assertEquals(1, other.idleCount(), "the waiter is bound by 'full' alone: the region is kept");
      full.release(taken);
      full.release(waiting.get(TransportTestSupport.DEADLINE.toSeconds(), TimeUnit.SECONDS));
    }
  }

  @Test
  void idleRegionsInTheWayAreFreedForRoom() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport, AllocatorOptions.DEFAULTS.withLimit(2 * KIB64));
        RegisteredAllocator a = root.newChild("a", pooled(Long.MAX_VALUE, Long.MAX_VALUE))) {
      RegisteredRegion small = a.allocate(1);
      a.release(small);
      assertEquals(1, a.idleCount());
      RegisteredRegion big = a.allocate(2 * KIB64); // only fits once the idle region is gone
      assertFalse(small.isOpen());
      assertEquals(0, a.idleCount());
      assertEquals(2 * KIB64, root.allocatedBytes());
      a.release(big);
      assertEquals(2 * KIB64, root.allocatedBytes(), "idle regions stay accounted for");
    }
  }

  @Test
  void closeNamesWhatIsStillOutAndLateReturnsAreFreed() throws Exception {
    RegisteredAllocator root = RegisteredAllocator.root("executor", transport);
    RegisteredAllocator child = root.newChild("destinations", pooled(Long.MAX_VALUE, Long.MAX_VALUE));
    RegisteredRegion kept = child.allocate(KIB64);
    RegisteredRegion out1 = child.allocate(KIB64 + 1);
    RegisteredRegion out2 = child.allocate(KIB64);
    child.release(kept);

    IllegalStateException leak = assertThrows(IllegalStateException.class, root::close);
    assertEquals("allocator 'executor' closed with memory still out: allocator 'destinations' has 2 regions out"
        + " (largest first: 131072, 65536 bytes)", leak.getMessage());
    assertFalse(kept.isOpen(), "idle regions are freed at close");
    IllegalStateException closed = assertThrows(IllegalStateException.class, () -> child.allocate(1));
    assertTrue(closed.getMessage().contains("allocator 'executor' is closed"), closed.getMessage());

    child.release(out1);
    assertFalse(out1.isOpen(), "a region given back after close is freed at once");
    assertEquals(1, child.shutdown());
    child.free(out2);
    assertEquals(0, transport.liveRegionCount());
    root.close(); // nothing left: the report is clean now
  }

  @Test
  void regionsFromElsewhereAreRefused() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport);
        RegisteredAllocator other = root.newChild("other", AllocatorOptions.DEFAULTS)) {
      RegisteredRegion r = other.allocate(8);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> root.release(r));
      assertTrue(e.getMessage().contains("is not out from allocator 'root'"), e.getMessage());
      other.release(r);
      assertThrows(IllegalArgumentException.class, () -> other.release(r), "given back twice");
      RegisteredRegion direct = transport.allocate(8);
      assertThrows(IllegalArgumentException.class, () -> other.free(direct));
      direct.close();
      assertThrows(IllegalArgumentException.class, () -> other.allocate(-1));
      assertThrows(IllegalArgumentException.class, () -> AllocatorOptions.DEFAULTS.withLimit(0));
      assertThrows(IllegalArgumentException.class, () -> RegionSizes.powersOfTwo(3, 8));
    }
  }

  @Test
  void aFailedRegistrationGivesItsBytesBackAndRevokedIdleRegionsAreNotHandedOut() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("root", transport, pooled(KIB64, KIB64))) {
      RegisteredRegion idle = root.allocate(1);
      root.release(idle);
      assertEquals(KIB64, root.allocatedBytes());
      transport.close();
      assertFalse(idle.isOpen());
      TransportException e = assertThrows(TransportException.class, () -> root.allocate(KIB64));
      assertTrue(e.getMessage().contains("closed"), e.getMessage());
      assertEquals(0, root.allocatedBytes());
      assertEquals(0, root.idleCount());
    }
  }
}
