package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.Eventually;
import io.sluice.transport.ProductThreads;
import java.util.Map;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a server and a client refuse by default: puts unless the application enables them, puts
 * that would replace a table the application published, puts beyond their bound, and a client that
 * requires the data plane falling back to plain Flight.
 */
class SecureDefaultsTest {
  /** The name of the server's threads for plain streams. */
  private static final String STREAM_THREAD = "sluice-flight-stream";

  private static void putRows(TableWriter w, VectorSchemaRoot root, int batches, int rows) {
    for (int k = 0; k < batches; k++) {
      TestTables.fillMixed(root, (long) k * rows, rows);
      w.putNext();
    }
    w.completed();
  }

  @org.junit.jupiter.api.Test
  void aPlainPutCannotReplaceAPublishedTableByDefault() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         FlightClient plain = DataPlaneGetTest.plainClient(allocator, server.location());
         DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
      server.publish("features", TestTables.numeric(allocator, 2, 1000));
      String before = render(allocator, server);
      FlightClient.ClientStreamListener put = plain.startPut(FlightDescriptor.path("features"), root, dictionaries,
          new AsyncPutListener());
      TestTables.fillMixed(root, 0, 10);
      put.putNext();
      put.completed();
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, put::getResult);
      assertEquals(FlightStatusCode.UNAUTHORIZED, e.status().code(), e.toString());
      assertEquals(before, render(allocator, server), "the published table was replaced");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "grpc"})
  void ourClientsPutsAreRefusedByDefault(String path) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
             path.equals("grpc") ? DataPlaneGetTest.grpcOnly("tcp") : config("tcp", SECRET));
         DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
        try (TableWriter w = client.startPut(FlightDescriptor.path("up"), root, dictionaries)) {
          assertEquals(path, w.dataPath());
          putRows(w, root, 2, 100);
        }
      });
      assertEquals(FlightStatusCode.UNAUTHORIZED, e.status().code(), e.toString());
      assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
          () -> client.flight().getInfo(FlightDescriptor.path("up"))).status().code());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "grpc"})
  void aPutCannotReplaceATableTheApplicationPublished(String path) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, Map.of("sluice.flight.puts", "true")));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
             path.equals("grpc") ? DataPlaneGetTest.grpcOnly("tcp") : config("tcp", SECRET));
         DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
      server.publish("features", TestTables.numeric(allocator, 2, 1000));
      String before = render(allocator, server);
      int regions = server.registeredRegions();
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
        try (TableWriter w = client.startPut(FlightDescriptor.path("features"), root, dictionaries)) {
          assertEquals(path, w.dataPath());
          putRows(w, root, 2, 100);
        }
      });
      assertEquals(FlightStatusCode.ALREADY_EXISTS, e.status().code(), e.toString());
      org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("published by the server's application"),
          e.getMessage());
      assertEquals(before, render(allocator, server), "the published table was replaced");
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(regions, server.registeredRegions(), "the refused put left registered memory behind");

      // Puts may create a table, and replace one that a put stored.
      for (int rows : new int[] {100, 300}) {
        try (TableWriter w = client.startPut(FlightDescriptor.path("uploaded"), root, dictionaries)) {
          putRows(w, root, 1, rows);
        }
        assertEquals(rows, client.flight().getInfo(FlightDescriptor.path("uploaded")).getRecords());
      }
      // The application may replace any table, one a put stored too; puts may not replace it after that.
      server.publish("uploaded", TestTables.numeric(allocator, 1, 7));
      assertEquals(FlightStatusCode.ALREADY_EXISTS, assertThrows(FlightRuntimeException.class, () -> {
        try (TableWriter w = client.startPut(FlightDescriptor.path("uploaded"), root, dictionaries)) {
          putRows(w, root, 1, 100);
        }
      }).status().code());
      assertEquals(7, client.flight().getInfo(FlightDescriptor.path("uploaded")).getRecords());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "grpc"})
  void putsBeyondTheBoundStoreNothing(String path) throws Exception {
    Map<String, String> bounded = Map.of("sluice.flight.puts", "true", "sluice.flight.maxPutBytes", "256k");
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounded));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
             path.equals("grpc") ? DataPlaneGetTest.grpcOnly("tcp") : config("tcp", SECRET));
         DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
      int regions = server.registeredRegions();
      try (TableWriter w = client.startPut(FlightDescriptor.path("small"), root, dictionaries)) {
        putRows(w, root, 1, 100); // well under the bound: stored
      }
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
        try (TableWriter w = client.startPut(FlightDescriptor.path("big"), root, dictionaries)) {
          putRows(w, root, 8, 20_000); // about 12 MiB
        }
      });
      assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
      assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
          () -> client.flight().getInfo(FlightDescriptor.path("big"))).status().code());
      client.flight().getInfo(FlightDescriptor.path("small"));
      server.remove("small");
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(regions, server.registeredRegions(), "the refused put left registered memory behind");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"wrong-secret", "no-data-plane"})
  void aClientThatRequiresTheDataPlaneRefusesToFallBack(String why) throws Exception {
    Map<String, String> required = Map.of("sluice.flight.requireDataPlane", "true");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", why.equals("wrong-secret") ? SECRET : null));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
             config("tcp", why.equals("wrong-secret") ? "another-secret-of-this-test" : SECRET, required))) {
      server.publish("t", TestTables.numeric(allocator, 2, 1000));
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
          () -> client.getStream(SluiceFlightServer.ticket("t")).close());
      assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
      assertEquals("grpc", client.dataPlane());
    }
  }

  @org.junit.jupiter.api.Test
  void readersThatNeverReadHoldABoundedNumberOfThreads() throws Exception {
    // An acknowledgement deadline longer than the test: a stream that got a thread keeps it.
    Map<String, String> four = Map.of("sluice.flight.streamThreads", "4", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, four))) {
      server.publish("big", TestTables.numeric(allocator, 8, 400_000)); // about 10 MiB a batch
      int before = ProductThreads.count(STREAM_THREAD);
      java.util.List<FlightClient> idle = new java.util.ArrayList<>();
      java.util.List<org.apache.arrow.flight.FlightStream> streams = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < 12; i++) {
          FlightClient c = DataPlaneGetTest.plainClient(allocator, server.location());
          idle.add(c);
          streams.add(c.getStream(SluiceFlightServer.ticket("big"))); // and never read
        }
        // A stream that got a thread sends its schema and then holds the thread, waiting for its
        // reader; one beyond the bound is refused. Asking each for its schema waits until the
        // server has answered all 12, without reading a batch.
        int refused = 0;
        for (org.apache.arrow.flight.FlightStream s : streams) {
          try {
            s.getSchema();
          } catch (FlightRuntimeException e) {
            assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
            refused++;
          }
        }
        assertEquals(8, refused, "readers refused beyond the 4 stream threads");
        org.junit.jupiter.api.Assertions.assertTrue(server.streamThreads() <= 4,
            server.streamThreads() + " stream threads with 12 idle readers");
        int threads = ProductThreads.count(STREAM_THREAD) - before;
        org.junit.jupiter.api.Assertions.assertTrue(threads <= 4, threads + " more " + STREAM_THREAD
            + " threads with 12 idle readers: " + ProductThreads.describe());
      } finally {
        for (org.apache.arrow.flight.FlightStream s : streams) {
          try {
            s.cancel("done", null);
            s.close();
          } catch (Exception e) {
            // cancelled streams report it on close
          }
        }
        for (FlightClient c : idle) {
          c.close();
        }
      }
    }
  }

  private static String render(BufferAllocator allocator, SluiceFlightServer server) throws Exception {
    try (FlightClient plain = DataPlaneGetTest.plainClient(allocator, server.location());
         org.apache.arrow.flight.FlightStream s = plain.getStream(SluiceFlightServer.ticket("features"))) {
      StringBuilder b = new StringBuilder();
      while (s.next()) {
        b.append(s.getRoot().contentToTSVString());
      }
      return b.toString();
    }
  }

  /**
   * Waits until everything {@code allocator} handed out is back. gRPC's threads give a call's last
   * buffers back after its client has seen the call end (a put the server refused, for one):
   * closing the allocator at once could report them as leaked. A buffer still held at the deadline
   * is a leak; the allocator's close then names it.
   */
  static void awaitReleased(BufferAllocator allocator) {
    Eventually.reaches("every buffer of the allocator given back", 0L, allocator::getAllocatedMemory);
  }
}
