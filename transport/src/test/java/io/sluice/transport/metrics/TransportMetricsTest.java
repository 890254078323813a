package io.sluice.transport.metrics;

import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.Transports;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The counters a transport keeps, read through {@link Transport#metrics()} after real traffic. */
class TransportMetricsTest {
  private static final MessageHandler ECHO = (peer, m) -> CompletableFuture.completedFuture(
      ByteBuffer.allocate(m.remaining()).put(m).flip());

  static Map<String, Long> values(Transport t) {
    return t.metrics().snapshot().stream().collect(Collectors.toMap(Metric::name, Metric::value));
  }

  /**
   * Waits until {@code t}'s counters named in {@code expected} hold those values. A READ's or a
   * request's counters are updated as its future completes, after the caller may have been told;
   * a region is freed when the READ written from it lets go, after the reader has its bytes.
   */
  private static void reaches(Transport t, Map<String, Long> expected) {
    Eventually.reaches("counters of " + t, new TreeMap<>(expected), () -> {
      Map<String, Long> now = values(t);
      TreeMap<String, Long> seen = new TreeMap<>();
      expected.keySet().forEach(k -> seen.put(k, now.get(k)));
      return seen;
    });
  }

  @Test
  void tcpReadsAndRequestsAreCountedOnBothSides() throws Exception {
    try (TransportHarness h = new TransportHarness("tcp", Map.of())) {
      Transport owner = h.open(ECHO);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      try (RegisteredRegion src = owner.allocate(8192); RegisteredRegion dst = reader.allocate(8192)) {
        assertEquals(8192, values(owner).get("memory.registeredBytes"));
        assertEquals(1, values(owner).get("memory.registeredRegions"));
        await(c.read(src.descriptor(), 0, dst, 0, 4096));
        await(c.read(src.descriptor(), 4096, dst, 4096, 1000));
        await(c.request(ByteBuffer.wrap(new byte[] {1, 2, 3})));
        reaches(reader, Map.of("reads.tcp.count", 2L, "reads.tcp.bytes", 5096L, "reads.shm.bytes", 0L,
            "reads.inFlightBytes", 0L, "reads.latency.count", 2L, "requests.count", 1L, "connections.opened", 1L));
        Map<String, Long> r = values(reader);
        assertEquals(2, r.get("reads.latency.le." + LatencyHistogram.BOUNDS_MICROS[20] + "us")
            + countAbove(reader, "reads.latency"));
        reaches(owner, Map.of("served.reads.count", 2L, "served.reads.bytes", 5096L, "served.requests.count", 1L,
            "connections.accepted", 1L));
        ExecutionException outside = assertThrows(ExecutionException.class,
            () -> c.read(src.descriptor(), 8000, dst, 0, 1000).get(20, TimeUnit.SECONDS));
        assertTrue(outside.getCause() instanceof io.sluice.transport.ReadOutOfBoundsException, outside.toString());
        reaches(reader, Map.of("reads.failed", 1L));
      }
      reaches(owner, Map.of("memory.registeredBytes", 0L, "memory.registeredRegions", 0L));
      c.close();
    }
  }

  private static long countAbove(Transport t, String histogram) {
    Map<String, Long> v = values(t);
    return v.get(histogram + ".count") - v.get(histogram + ".le." + LatencyHistogram.BOUNDS_MICROS[20] + "us");
  }

  @Test
  void shmReadsAreCountedByTheirPath() throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable());
    try (TransportHarness h = new TransportHarness("shm", Map.of())) {
      Transport owner = h.open(MessageHandler.REJECT_ALL);
      Transport reader = h.open(MessageHandler.REJECT_ALL);
      Connection c = TransportHarness.connect(reader, owner);
      try (RegisteredRegion src = owner.allocate(4096); RegisteredRegion dst = reader.allocate(4096)) {
        await(c.read(src.descriptor(), 0, dst, 0, 4096));
      }
      reaches(reader, Map.of("reads.shm.count", 1L, "reads.shm.bytes", 4096L, "reads.tcp.count", 0L));
      c.close();
    }
  }

  @Test
  void aWrongSecretCountsAsAnAuthenticationFailureOnBothSides() throws Exception {
    try (TransportHarness h = new TransportHarness("tcp", Map.of())) {
      Transport server = h.open(MessageHandler.REJECT_ALL);
      Transport liar = h.open(MessageHandler.REJECT_ALL, Map.of("sluice.transport.secret", "not-the-shared-secret-at-all"));
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> liar.connect(server.localAddress()).get(20, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof io.sluice.transport.AuthenticationFailedException, e.toString());
      reaches(liar, Map.of("connections.connectFailed.authentication", 1L, "handshake.failed.authentication", 1L));
      // The server counts its side once the session has ended, which it does as it refuses.
      reaches(server, Map.of("handshake.failed.authentication", 1L, "connections.closed.authentication", 1L));
    }
  }

  @Test
  void everySnapshotListsTheSameNamesAndUnits() {
    List<Metric> a = new TransportMetrics().snapshot();
    TransportMetrics busy = new TransportMetrics();
    busy.connectFailed(TransportMetrics.Reason.TIMEOUT, true);
    busy.regionRegistered(10);
    List<Metric> b = busy.snapshot();
    assertEquals(a.stream().map(Metric::name).toList(), b.stream().map(Metric::name).toList());
    assertEquals(a.size(), a.stream().map(Metric::name).distinct().count());
  }

  @Test
  void histogramBucketsArePowersOfTwoMicroseconds() {
    assertEquals(0, LatencyHistogram.bucketOf(0));
    assertEquals(0, LatencyHistogram.bucketOf(1));
    assertEquals(1, LatencyHistogram.bucketOf(2));
    assertEquals(2, LatencyHistogram.bucketOf(3));
    assertEquals(2, LatencyHistogram.bucketOf(4));
    assertEquals(LatencyHistogram.BOUNDS_MICROS.length, LatencyHistogram.bucketOf(Long.MAX_VALUE / 1000));
    LatencyHistogram h = new LatencyHistogram();
    for (int i = 0; i < 99; i++) {
      h.record(TimeUnit.MICROSECONDS.toNanos(3));
    }
    h.record(TimeUnit.MILLISECONDS.toNanos(5));
    LatencyHistogram.Snapshot s = h.snapshot();
    assertEquals(100, s.count());
    assertEquals(4, s.quantileMicros(0.5));
    assertEquals(4, s.quantileMicros(0.99));
    assertEquals(8192, s.quantileMicros(1.0));
    assertEquals(99 * 3 + 5000, s.sumMicros());
    assertThrows(IllegalArgumentException.class, () -> s.quantileMicros(0));
  }
}
