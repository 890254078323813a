package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.ProductThreads;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The server's bounds hold against one client that hogs them, and the next client is still served:
 * data-plane gets nobody pulls, plain streams nobody reads, puts that fill the server.
 */
class StreamBoundsTest {
  /**
   * Threads one transport may start as it works, beside the streams' own: its handlers, I/O
   * loops, acceptor and timer, and a few for connecting and handshakes.
   */
  private static final int THREADS_PER_TRANSPORT = 16;

  @Test
  void unpulledDataPlaneGetsHoldABoundedNumberOfThreadsAndAnotherClientIsServed() throws Exception {
    // An acknowledgement deadline longer than the test: a get that got a thread keeps it, so the
    // counts below are what 200 gets hold, not what is left after some timed out.
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGets", "8", "sluice.flight.dataPlaneGetsPerClient",
        "4", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         SluiceFlightClient hog = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET));
         SluiceFlightClient other = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("big", TestTables.numeric(allocator, 4, 1000));
      String expected = TestTables.publishMixed(server, allocator, "small", 2, 100,
          CompressionUtil.CodecType.NO_COMPRESSION);
      int before = ProductThreads.count();
      List<TableReader> unpulled = new ArrayList<>();
      try {
        for (int i = 0; i < 200; i++) {
          unpulled.add(hog.getStream(SluiceFlightServer.ticket("big"))); // and never pulled
        }
        // The last get is refused, as is every one past the client's share...
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> unpulled.get(199).next());
        assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("sluice.flight.dataPlaneGetsPerClient"), e.getMessage());
        // ...while the share's gets wait for their reader on the server's get threads.
        Eventually.reaches("data-plane gets the hog's share holds", 4, server::activeDataPlaneStreams);
        assertTrue(server.streamThreads() <= 8, server.streamThreads() + " get threads for 200 unpulled gets");
        // Each get used to block a thread of its own until the deadline: 200 more. What the product
        // may add is its get threads and what the server's and the hog's transports start as they
        // work; threads of a pool that served the burst may take a moment to end.
        Eventually.matches("product threads with 200 unpulled gets, " + before + " before them",
            Eventually.DEADLINE, ProductThreads::count, n -> n - before <= 8 + 2 * THREADS_PER_TRANSPORT);
        try (TableReader r = other.getStream(SluiceFlightServer.ticket("small"))) {
          assertEquals("tcp", r.dataPath());
          assertEquals(expected, TestTables.render(r));
        }
      } finally {
        for (TableReader r : unpulled) {
          try {
            r.close();
          } catch (RuntimeException e) {
            // a refused stream reports it again
          }
        }
      }
    }
  }

  @Test
  void oneClientHoldsNoMoreThanItsShareOfThePlainStreamThreads() throws Exception {
    // An acknowledgement deadline longer than the test: a stream that got a thread keeps it.
    Map<String, String> bounds = Map.of("sluice.flight.streamThreads", "8", "sluice.flight.streamThreadsPerClient",
        "2", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         FlightClient hog = DataPlaneGetTest.plainClient(allocator, server.location());
         FlightClient other = DataPlaneGetTest.plainClient(allocator, server.location())) {
      server.publish("big", TestTables.numeric(allocator, 8, 400_000)); // about 10 MiB a batch
      server.publish("small", TestTables.numeric(allocator, 2, 10));
      List<FlightStream> idle = new ArrayList<>();
      try {
        for (int i = 0; i < 6; i++) {
          idle.add(hog.getStream(SluiceFlightServer.ticket("big"))); // and never read
        }
        // A stream that got a thread sends its schema, then waits for its reader with the thread;
        // one refused ends with the refusal. Asking each for its schema waits until the server has
        // answered every one, without reading a batch.
        int refused = 0;
        for (FlightStream s : idle) {
          try {
            s.getSchema();
          } catch (FlightRuntimeException e) {
            assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
            assertTrue(e.getMessage().contains("sluice.flight.streamThreadsPerClient"), e.getMessage());
            refused++;
          }
        }
        assertEquals(4, refused, "the hog's streams refused beyond its share of 2");
        try (FlightStream s = other.getStream(SluiceFlightServer.ticket("small"))) {
          int rows = 0;
          while (s.next()) {
            rows += s.getRoot().getRowCount();
          }
          assertEquals(20, rows, "another client was not served");
        }
      } finally {
        for (FlightStream s : idle) {
          try {
            s.cancel("done", null);
            s.close();
          } catch (Exception e) {
            // cancelled streams report it on close
          }
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "grpc"})
  void putsTogetherAreBoundedInTablesAndBytes(String path) throws Exception {
    long onePut;
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer probe = server(allocator, config("tcp", SECRET, Map.of("sluice.flight.puts", "true")));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, probe.location(), client(path))) {
      put(allocator, client, "probe", 3, 400);
      onePut = client.flight().getInfo(FlightDescriptor.path("probe")).getBytes();
    }
    Map<String, String> bounds = new HashMap<>(Map.of("sluice.flight.puts", "true", "sluice.flight.maxPutTables", "2",
        "sluice.flight.maxPutTotalBytes", Long.toString(onePut * 7 / 2)));
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), client(path))) {
      put(allocator, client, "a", 3, 400);
      put(allocator, client, "b", 3, 400);
      refusedNaming("sluice.flight.maxPutTables", () -> put(allocator, client, "c", 1, 10));
      put(allocator, client, "a", 3, 400); // a replacement holds both until it is stored, then frees the old
      refusedNaming("sluice.flight.maxPutTotalBytes", () -> put(allocator, client, "b", 6, 400));
      assertEquals(onePut, client.flight().getInfo(FlightDescriptor.path("b")).getBytes(), "a refused put replaced b");
      server.remove("b");
      put(allocator, client, "c", 3, 400);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "grpc"})
  void aPutsMetadataCountsAgainstItsBound(String path) throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.puts", "true", "sluice.flight.maxPutBytes", "4096");
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), client(path))) {
      // Batches of no rows carry no body bytes, only metadata.
      refusedNaming("sluice.flight.maxPutBytes", () -> put(allocator, client, "empty", 200, 0));
      assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
          () -> client.flight().getInfo(FlightDescriptor.path("empty"))).status().code());
    }
  }

  private static io.sluice.transport.TransportConfig client(String path) {
    return path.equals("grpc") ? DataPlaneGetTest.grpcOnly("tcp") : config("tcp", SECRET);
  }

  private static void put(BufferAllocator allocator, SluiceFlightClient client, String name, int batches, int rows)
      throws Exception {
    try (DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator);
         TableWriter w = client.startPut(FlightDescriptor.path(name), root, dictionaries)) {
      for (int k = 0; k < batches; k++) {
        TestTables.fillMixed(root, (long) k * rows, rows);
        w.putNext();
      }
      w.completed();
    }
  }

  private static void refusedNaming(String key, org.junit.jupiter.api.function.Executable put) {
    FlightRuntimeException e = assertThrows(FlightRuntimeException.class, put);
    assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
    assertTrue(e.getMessage().contains(key), e.getMessage());
  }
}
