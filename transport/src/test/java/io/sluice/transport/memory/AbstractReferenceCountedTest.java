package io.sluice.transport.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The reference-count contract: starts at 1, one deallocate at 0, nothing past it. */
class AbstractReferenceCountedTest {
  private static final class Counted extends AbstractReferenceCounted {
    final AtomicInteger deallocated = new AtomicInteger();

    @Override
    protected void deallocate() {
      deallocated.incrementAndGet();
    }

    @Override
    public String toString() {
      return "Counted";
    }
  }

  @Test
  void startsAtOneAndDeallocatesOnceAtZero() {
    Counted c = new Counted();
    assertEquals(1, c.refCnt());
    assertSame(c, c.retain());
    assertEquals(2, c.refCnt());
    assertFalse(c.release());
    assertEquals(0, c.deallocated.get());
    assertTrue(c.release(), "the last release frees");
    assertEquals(1, c.deallocated.get());
    assertEquals(0, c.refCnt());
  }

  @Test
  void nothingPassesZero() {
    Counted c = new Counted();
    c.release();
    IllegalStateException release = assertThrows(IllegalStateException.class, c::release);
    assertTrue(release.getMessage().contains("release of Counted"), release.getMessage());
    IllegalStateException retain = assertThrows(IllegalStateException.class, c::retain);
    assertTrue(retain.getMessage().contains("retain of Counted"), retain.getMessage());
    assertFalse(c.tryRetain());
    assertEquals(0, c.refCnt());
    assertEquals(1, c.deallocated.get(), "a release past zero frees nothing twice");
  }

  @Test
  void racingReleasesDeallocateExactlyOnce() throws Exception {
    for (int round = 0; round < 50; round++) {
      Counted c = new Counted();
      int threads = 4;
      for (int i = 1; i < threads; i++) {
        c.retain();
      }
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        for (int i = 0; i < threads; i++) {
          pool.execute(() -> {
            try {
              if (!start.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never started"); // and the count below is off
              }
              c.tryRetain();
              c.release();
              c.release();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
        }
        start.countDown();
      } finally {
        pool.shutdown();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
      }
      assertEquals(1, c.deallocated.get());
    }
  }
}
