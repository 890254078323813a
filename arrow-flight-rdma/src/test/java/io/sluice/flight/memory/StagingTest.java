package io.sluice.flight.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.LoopbackTransport;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.memory.RegisteredAllocator;
import io.sluice.transport.region.Region;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Staging memory: the budget bounds it, the producer waits for room, acknowledged regions are reused. */
class StagingTest {
  private static final int KIB64 = 64 << 10;
  private static final long READER = 7;
  private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
  /** A deadline no test waits out: the producer is woken by an acknowledgement long before. */
  private static final long PATIENT_NANOS = TimeUnit.MINUTES.toNanos(2);
  private static final String KEY = "sluice.flight.stagingBytes";

  @RegisterExtension
  final LoopbackTransport loopback = new LoopbackTransport("staging-test");

  @Test
  void acknowledgedRegionsAreReusedAndOnlyTheReaderMayReadThem() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        Staging staging = new Staging(root, READER, 1 << 20, KEY, 4, TIMEOUT_NANOS)) {
      Staging.Slot a = staging.acquire(100);
      assertEquals(KIB64, a.region().length());
      assertTrue(((Region) a.region()).readableBy(READER));
      assertFalse(((Region) a.region()).readableBy(READER + 1), "staged bodies are for the one reader");
      Staging.Slot b = staging.acquire(200 << 10);
      assertEquals(256 << 10, b.region().length());
      staging.acknowledge(b.sequence());
      assertEquals(0, staging.inFlight());
      Staging.Slot c = staging.acquire(KIB64 + 1);
      assertSame(b.region(), c.region(), "the smallest idle region that holds the body serves it");
      Staging.Slot d = staging.acquire(10);
      assertSame(a.region(), d.region());
      assertEquals(KIB64 + (256 << 10), staging.heldBytes());
    }
  }

  @Test
  void theProducerWaitsForRoomUntilTheDeadline() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        Staging staging = new Staging(root, READER, 2 * KIB64, KEY, 8, TIMEOUT_NANOS)) {
      staging.acquire(KIB64);
      staging.acquire(KIB64);
      long start = System.nanoTime();
      TimeoutException full = assertThrows(TimeoutException.class, () -> staging.acquire(KIB64));
      // A lower bound only, on the clock the deadline is taken from after start: no load breaks it.
      assertTrue(System.nanoTime() - start >= TIMEOUT_NANOS, "waited the whole deadline");
      assertTrue(full.getMessage().contains("registered memory stayed full"), full.getMessage());
    }
  }

  @Test
  void anAcknowledgementMakesRoomForAWaitingProducer() throws Exception {
    // The producer must still be waiting when the test acknowledges, however slowly the test runs.
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        Staging staging = new Staging(root, READER, 2 * KIB64, KEY, 8, PATIENT_NANOS)) {
      Staging.Slot first = staging.acquire(KIB64);
      Staging.Slot second = staging.acquire(KIB64);
      CompletableFuture<Staging.Slot> larger = CompletableFuture.supplyAsync(() -> {
        try {
          return staging.acquire(2 * KIB64);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      Eventually.holds("the producer waits for room", root::hasWaiters);
      staging.acknowledge(second.sequence());
      RegisteredRegion got = larger.get(30, TimeUnit.SECONDS).region();
      assertEquals(2 * KIB64, got.length(), "the acknowledged regions made room for a larger one");
      assertFalse(first.region().isOpen(), "regions are freed, not kept idle, while someone waits for memory");
      assertFalse(second.region().isOpen());
      assertEquals(2 * KIB64, staging.peakBytes(), "never more than the budget");
    }
  }

  @Test
  void aBodyTheBudgetCannotHoldIsRefusedNamingTheSetting() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport());
        Staging staging = new Staging(root, READER, 100 << 10, KEY, 4, TIMEOUT_NANOS)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> staging.acquire((100 << 10) + 1));
      assertEquals("a batch body needs 102401 bytes of registered memory, more than " + KEY + " = 102400 allows",
          e.getMessage());
      Staging.Slot s = staging.acquire(70 << 10);
      assertEquals(70 << 10, s.region().length(), "the 128 KiB class would not fit the budget: the exact length");
    }
  }

  @Test
  void closeRevokesRegionsInFlightAndCancelsTheProducer() throws Exception {
    try (RegisteredAllocator root = RegisteredAllocator.root("session", loopback.transport())) {
      Staging staging = new Staging(root, READER, 1 << 20, KEY, 4, TIMEOUT_NANOS);
      Staging.Slot s = staging.acquire(10);
      staging.close();
      assertFalse(s.region().isOpen());
      assertThrows(CancellationException.class, () -> staging.acquire(10));
      assertEquals(0, loopback.transport().liveRegionCount());
    }
  }
}
