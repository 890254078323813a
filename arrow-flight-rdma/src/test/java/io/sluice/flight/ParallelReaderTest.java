package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Several streams read at once over one client's data plane, each on its own thread; a failing one fails the read. */
class ParallelReaderTest {
  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void everyStreamDeliversItsWholeTable(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET))) {
      server.publish("a", TestTables.numeric(allocator, 6, 5_000));
      server.publish("b", TestTables.numeric(allocator, 3, 7_000));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET))) {
        ConcurrentHashMap<Integer, AtomicLong> sums = new ConcurrentHashMap<>();
        ParallelReader.Result r = ParallelReader.read(client, List.of(SluiceFlightServer.ticket("a"),
            SluiceFlightServer.ticket("b"), SluiceFlightServer.ticket("a")), (stream, batch) -> {
              BigIntVector v = (BigIntVector) batch.getVector(0);
              long s = 0;
              for (int i = 0; i < batch.getRowCount(); i++) {
                s += v.get(i);
              }
              sums.computeIfAbsent(stream, k -> new AtomicLong()).addAndGet(s);
            });
        assertEquals(List.of(30_000L, 21_000L, 30_000L), r.rows());
        assertEquals(provider, r.dataPath());
        assertEquals(sums.get(0).get(), sums.get(2).get());
        // The tickets of a FlightInfo's endpoints read the same way.
        ParallelReader.Result viaInfo = ParallelReader.read(client,
            ParallelReader.tickets(client.flight().getInfo(FlightDescriptor.path("b"))), (stream, batch) -> { });
        assertEquals(List.of(21_000L), viaInfo.rows());
      }
      AuthorizationTest.awaitNoStreams(server);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp"})
  void oneFailingStreamFailsTheReadAndStopsTheOthers(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET))) {
      server.publish("a", TestTables.numeric(allocator, 6, 5_000));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> ParallelReader.read(client,
            List.of(SluiceFlightServer.ticket("a"), SluiceFlightServer.ticket("missing")), (stream, batch) -> { }));
        assertEquals(FlightStatusCode.NOT_FOUND, e.status().code(), e.toString());
      }
      AuthorizationTest.awaitNoStreams(server);
    }
  }
}
