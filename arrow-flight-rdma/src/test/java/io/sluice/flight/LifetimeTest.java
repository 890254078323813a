package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.TransportConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.Test;

/**
 * What a served batch costs and when it is freed: the server's registered memory stays within its
 * bound while a slow reader holds it, a reader that stops acknowledging is cut off at the
 * deadline, and a reader killed mid-stream frees everything.
 */
class LifetimeTest {
  static TransportConfig config(Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(Map.of(
        "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1",
        "sluice.transport.secret", SECRET));
    m.putAll(extra);
    return TransportConfig.of(m);
  }

  @Test
  void readersAddNoRegisteredMemoryAndASlowOneDelaysNobody() throws Exception {
    TransportConfig c = config(Map.of("sluice.flight.streamWindow", "2"));
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, c)) {
      server.publish("t", TestTables.numeric(allocator, 24, 40_000)); // ~1 MiB a batch
      int tableRegions = server.registeredRegions();
      assertTrue(tableRegions > 0);
      try (SluiceFlightClient slow = SluiceFlightClient.connect(allocator, server.location(), c);
           SluiceFlightClient fast = SluiceFlightClient.connect(allocator, server.location(), c);
           TableReader slowStream = slow.getStream(SluiceFlightServer.ticket("t"))) {
        // The slow reader takes one batch and then holds its stream, unread, until the fast one
        // has read the whole table: the fast one cannot have waited for it.
        CountDownLatch slowHolds = new CountDownLatch(1);
        CountDownLatch fastDone = new CountDownLatch(1);
        CompletableFuture<Long> slowRows = CompletableFuture.supplyAsync(() -> {
          long n = 0;
          while (slowStream.next()) {
            n += slowStream.getRoot().getRowCount();
            assertEquals(tableRegions, server.registeredRegions(), "a stream registered memory");
            if (slowHolds.getCount() > 0) {
              slowHolds.countDown();
              awaitOrFail(fastDone, "the fast reader never finished");
            }
          }
          return n;
        });
        try {
          awaitOrFail(slowHolds, "the slow reader never got its first batch");
          long rows = 0;
          try (TableReader r = fast.getStream(SluiceFlightServer.ticket("t"))) {
            while (r.next()) {
              rows += r.getRoot().getRowCount();
            }
          }
          assertEquals(24 * 40_000L, rows);
          assertFalse(slowRows.isDone(), "the slow reader's stream ended before the fast reader was done");
        } finally {
          fastDone.countDown();
        }
        assertEquals(24 * 40_000L, slowRows.get(60, TimeUnit.SECONDS));
      }
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(tableRegions, server.registeredRegions());
    }
  }

  /** Waits for {@code latch} as long as a test may take; fails naming {@code what} after that. */
  private static void awaitOrFail(CountDownLatch latch, String what) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new AssertionError(what + " within 60 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted: " + what, e);
    }
  }

  @Test
  void readerThatStopsAcknowledgingIsCutOffAtTheDeadline() throws Exception {
    // Short enough to wait out, long enough that a reader on a loaded machine has taken its first
    // batch before the server gives up on it.
    TransportConfig c = config(Map.of("sluice.flight.ackTimeoutMs", "3000", "sluice.flight.streamWindow", "2"));
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, c);
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), c)) {
      server.publish("t", TestTables.numeric(allocator, 10, 10_000));
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertTrue(r.next());
        AuthorizationTest.awaitNoStreams(server); // the server gave up on its own
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
          while (r.next()) {
            // drain what was sent before the deadline
          }
        });
        assertEquals(FlightStatusCode.TIMED_OUT, e.status().code(), e.toString());
      }
    }
  }

  @Test
  void readerKilledMidStreamFreesEverything() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(Map.of()))) {
      server.publish("t", TestTables.numeric(allocator, 64, 40_000));
      int tableRegions = server.registeredRegions();
      try (ChildJvm reader = ChildJvm.start(StalledReader.class,
          List.of(server.location().getUri().toString(), SECRET))) {
        assertEquals("READING tcp", reader.awaitLine("READING", "the reader process ended before reading"));
        assertTrue(server.activeDataPlaneStreams() > 0);
        assertTrue(server.activeGrants() > 0);
        reader.kill();
        AuthorizationTest.awaitNoStreams(server);
        assertEquals(tableRegions, server.registeredRegions(), "regions registered for the dead reader");
      }
    }
  }

  /** A reader in its own JVM: reads one batch, says so, then stalls until killed. */
  public static final class StalledReader {
    public static void main(String[] args) throws Exception {
      BufferAllocator allocator = new RootAllocator();
      SluiceFlightClient client = SluiceFlightClient.connect(allocator, new Location(args[0]),
          config(Map.of("sluice.transport.secret", args[1])));
      TableReader r = client.getStream(SluiceFlightServer.ticket("t"));
      r.next();
      System.out.println("READING " + r.dataPath());
      System.out.flush();
      Thread.sleep(TimeUnit.MINUTES.toMillis(5));
    }
  }
}
