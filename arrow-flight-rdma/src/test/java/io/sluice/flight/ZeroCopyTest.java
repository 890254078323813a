package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.util.TransferPair;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On shm a batch body reaches the client as a view of the server's memory: a view keeps the
 * stream's table and grant on the server for as long as it lives (past the stream's end, past the
 * table's removal), its bytes are accounted to the client's allocator, and a client that dies
 * holding views leaves nothing behind.
 */
class ZeroCopyTest {
  @BeforeEach
  void needsShm() {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable here");
  }

  static TransportConfig shm(boolean zeroCopy) {
    Map<String, String> m = new HashMap<>();
    m.put("sluice.transport.provider", "shm");
    m.put("sluice.transport.bindHost", "127.0.0.1");
    m.put("sluice.transport.secret", SECRET);
    m.put("sluice.flight.zeroCopy", String.valueOf(zeroCopy));
    return TransportConfig.of(m);
  }

  /** Moves column a of the batch now in {@code r} out of the reader, as an application keeping it would. */
  private static BigIntVector keep(TableReader r, BufferAllocator allocator) {
    TransferPair t = r.getRoot().getVector("a").getTransferPair(allocator);
    t.transfer();
    return (BigIntVector) t.getTo();
  }

  @Test
  void aViewOutlivesItsStreamAndHoldsTheServersMemoryUntilReleased() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, shm(true));
         BufferAllocator reading = allocator.newChildAllocator("reading", 0, Long.MAX_VALUE)) {
      server.publish("t", TestTables.numeric(allocator, 4, 10_000));
      BigIntVector kept;
      try (SluiceFlightClient client = SluiceFlightClient.connect(reading, server.location(), shm(true))) {
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
          assertEquals("shm", r.dataPath());
          long rows = 0;
          while (r.next()) {
            rows += r.getRoot().getRowCount();
          }
          assertEquals(40_000, rows);
          r.getRoot().clear();
        }
        AuthorizationTest.awaitNoStreams(server); // no view held: the stream ended with the reader
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
          assertTrue(r.next());
          kept = keep(r, reading);
          while (r.next()) {
            // to the end of the stream
          }
        }
        // The stream has ended, the view lives on: the server still keeps the table for this reader.
        assertEquals(1, server.activeGrants());
        assertEquals(1, server.activeDataPlaneStreams());
        assertTrue(reading.getAllocatedMemory() >= 10_000L * Long.BYTES, "the view is accounted to its allocator");
        for (int i = 0; i < 10_000; i++) {
          assertEquals(i, kept.get(i));
        }
        // Releasing it ends the stream on the server.
        BigIntVector again;
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
          assertTrue(r.next());
          again = keep(r, reading);
        }
        assertEquals(2, server.activeGrants());
        again.close();
        Eventually.reaches("streams whose reader still has access, the kept view's alone", 1, server::activeGrants);
      }
      // Closing the client releases what its views hold on the server; the view stays mapped.
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(9_999, kept.get(9_999));
      kept.close();
      assertEquals(0, reading.getAllocatedMemory());
    }
  }

  @Test
  void aViewHeldPastTheAckTimeoutFreesTheServersGetAndStaysReadable() throws Exception {
    // One get thread in all, and a short deadline: the reader's view does not hold the get past it.
    TransportConfig serving = shm(true).with(Map.of("sluice.flight.ackTimeoutMs", "1000",
        "sluice.flight.dataPlaneGets", "1"));
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, serving);
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), shm(true));
         SluiceFlightClient other = SluiceFlightClient.connect(allocator, server.location(), shm(true))) {
      server.publish("t", TestTables.numeric(allocator, 4, 10_000));
      BigIntVector kept;
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertTrue(r.next());
        kept = keep(r, allocator);
        while (r.next()) {
          // to the end of the stream: every body taken, one view kept
        }
      }
      // The kept view would hold the call open; the server ends it at the deadline instead.
      AuthorizationTest.awaitNoStreams(server);
      try (TableReader r = other.getStream(SluiceFlightServer.ticket("t"), java.time.Duration.ofSeconds(30))) {
        long rows = 0;
        while (r.next()) {
          rows += r.getRoot().getRowCount();
        }
        assertEquals(40_000, rows, "the get's place was not free again");
      }
      // Still mapped, and the table still published: the view reads what was published.
      for (int i = 0; i < 10_000; i++) {
        assertEquals(i, kept.get(i));
      }
      kept.close();
    }
  }

  @Test
  void theServerKeepsARemovedTableWhileViewsHoldIt() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, shm(true));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), shm(true))) {
      server.publish("t", TestTables.numeric(allocator, 4, 10_000));
      int oneTable = server.registeredRegions();
      BigIntVector kept;
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertTrue(r.next());
        assertTrue(r.next());
        kept = keep(r, allocator); // rows 10000..19999; the reader closes before the end
      }
      assertTrue(server.remove("t"));
      // A new table of the same size may not take the removed one's memory while the view lives.
      server.publish("u", TestTables.numeric(allocator, 4, 10_000));
      assertEquals(2 * oneTable, server.registeredRegions());
      assertEquals(1, server.activeGrants());
      for (int i = 0; i < 10_000; i++) {
        assertEquals(10_000 + i, kept.get(i));
      }
      kept.close();
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(oneTable, server.registeredRegions(), "the removed table was freed once its last view went");
    }
  }

  @Test
  void withoutZeroCopyBodiesAreReadAndTheStreamEndsWithTheReader() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, shm(true));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), shm(false))) {
      server.publish("t", TestTables.numeric(allocator, 2, 10_000));
      BigIntVector kept;
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertTrue(r.next());
        kept = keep(r, allocator);
        while (r.next()) {
          // to the end
        }
      }
      AuthorizationTest.awaitNoStreams(server); // the kept batch lies in the client's own memory
      assertEquals(5, kept.get(5));
      kept.close();
    }
  }

  @Test
  void aClientKilledWhileHoldingViewsLeavesNothingBehind() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, shm(true))) {
      server.publish("t", TestTables.numeric(allocator, 8, 20_000));
      int tableRegions = server.registeredRegions();
      try (ChildJvm reader = ChildJvm.start(ViewHolder.class, List.of(server.location().getUri().toString()))) {
        assertEquals("HOLDING shm", reader.awaitLine("HOLDING", "the reader process ended before holding views"));
        assertTrue(server.activeGrants() > 0);
        reader.kill();
        AuthorizationTest.awaitNoStreams(server);
        assertEquals(tableRegions, server.registeredRegions(), "regions kept for the dead reader");
      }
    }
  }

  /** A reader in its own JVM: reads a whole stream keeping two batches' views, says so, then stalls until killed. */
  public static final class ViewHolder {
    public static void main(String[] args) throws Exception {
      BufferAllocator allocator = new RootAllocator();
      SluiceFlightClient client = SluiceFlightClient.connect(allocator, new Location(args[0]), shm(true));
      List<BigIntVector> kept = new ArrayList<>();
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        while (r.next()) {
          if (kept.size() < 2) {
            kept.add(keep(r, allocator));
          }
        }
        System.out.println("HOLDING " + r.dataPath());
      }
      System.out.flush();
      Thread.sleep(TimeUnit.MINUTES.toMillis(5));
    }
  }
}
