package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Puts in both directions of the data plane, and many clients at once. */
class PutAndConcurrencyTest {
  static final java.util.Map<String, String> PUTS_ON = java.util.Map.of("sluice.flight.puts", "true");


  @ParameterizedTest
  @CsvSource({"tcp,tcp", "shm,shm", "tcp,grpc"})
  void putThenGetReturnsTheSameRows(String provider, String expectedPath) throws Exception {
    int batches = 6;
    int rows = 20_000; // about 1.5 MiB a batch
    try (BufferAllocator allocator = new RootAllocator()) {
      String expected = TestTables.expectedMixed(allocator, batches, rows);
      try (SluiceFlightServer server = server(allocator, config(provider, SECRET, PUTS_ON));
           SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
               expectedPath.equals("grpc") ? DataPlaneGetTest.grpcOnly(provider) : config(provider, SECRET));
           DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
           VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
        try (TableWriter w = client.startPut(FlightDescriptor.path("up"), root, dictionaries)) {
          assertEquals(expectedPath, w.dataPath());
          for (int k = 0; k < batches; k++) {
            TestTables.fillMixed(root, (long) k * rows, rows);
            w.putNext();
          }
          w.completed();
        }
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("up"))) {
          assertEquals(expected, TestTables.render(r));
        }
      }
    }
  }

  @Test
  void sixteenClientsReadAtOnce() throws Exception {
    int clients = 16;
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", SECRET))) {
        String expected = TestTables.publishMixed(server, allocator, "t", 4, 2000,
            CompressionUtil.CodecType.NO_COMPRESSION);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
          List<Future<String>> results = new ArrayList<>();
          for (int i = 0; i < clients; i++) {
            boolean plain = i % 4 == 3; // a quarter of them are plain Flight clients
            results.add(pool.submit(() -> {
              try (BufferAllocator mine = allocator.newChildAllocator("client", 0, Long.MAX_VALUE);
                   SluiceFlightClient c = SluiceFlightClient.connect(mine, server.location(),
                       plain ? DataPlaneGetTest.grpcOnly("tcp") : config("tcp", SECRET));
                   TableReader r = c.getStream(SluiceFlightServer.ticket("t"))) {
                assertEquals(plain ? "grpc" : "tcp", r.dataPath());
                return TestTables.render(r);
              }
            }));
          }
          for (Future<String> f : results) {
            assertEquals(expected, f.get(120, TimeUnit.SECONDS));
          }
        } finally {
          pool.shutdownNow();
        }
        AuthorizationTest.awaitNoStreams(server);
      }
    }
  }
}
