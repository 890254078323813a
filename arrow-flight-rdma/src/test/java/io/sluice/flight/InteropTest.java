package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneOffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.api.Test;

/** Standard flight-core clients against our server, and our client against a standard server. */
class InteropTest {

  /** What a plain FlightStream delivers, rendered like {@link TestTables#render}. */
  static String render(FlightStream s) {
    StringBuilder out = new StringBuilder();
    out.append(s.getSchema()).append('\n');
    while (s.next()) {
      out.append(TestTables.renderBatch(s.getRoot(), s.getDictionaryProvider()));
    }
    return out.toString();
  }

  @Test
  void plainFlightClientUsesEveryRpc() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", SECRET, PutAndConcurrencyTest.PUTS_ON));
           FlightClient plain = DataPlaneGetTest.plainClient(allocator, server.location())) {
        String expected = TestTables.publishMixed(server, allocator, "mixed", 3, 500, CompressionUtil.CodecType.ZSTD);

        List<FlightInfo> infos = new ArrayList<>();
        plain.listFlights(Criteria.ALL).forEach(infos::add);
        assertEquals(1, infos.size());
        FlightInfo info = plain.getInfo(FlightDescriptor.path("mixed"));
        assertEquals(1500, info.getRecords());
        assertEquals(TestTables.mixedSchema(), info.getSchema());
        assertEquals(server.location(), info.getEndpoints().get(0).getLocations().get(0));
        FlightRuntimeException missing = assertThrows(FlightRuntimeException.class,
            () -> plain.getInfo(FlightDescriptor.path("missing")));
        assertEquals(FlightStatusCode.NOT_FOUND, missing.status().code());

        // DoGet with the ticket from the endpoint: the compressed table arrives decompressed.
        try (FlightStream s = plain.getStream(info.getEndpoints().get(0).getTicket())) {
          assertEquals(expected, render(s));
        }

        // DoPut a table, then read it back with DoGet and with DoExchange.
        try (DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
             VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
          FlightClient.ClientStreamListener put =
              plain.startPut(FlightDescriptor.path("uploaded"), root, dictionaries, new AsyncPutListener());
          for (int k = 0; k < 3; k++) {
            TestTables.fillMixed(root, k * 500L, 500);
            put.putNext();
          }
          put.completed();
          put.getResult();
        }
        try (FlightStream s = plain.getStream(SluiceFlightServer.ticket("uploaded"))) {
          assertEquals(expected, render(s));
        }
        try (FlightClient.ExchangeReaderWriter x = plain.doExchange(FlightDescriptor.path("uploaded"))) {
          x.getWriter().completed();
          assertEquals(expected, render(x.getReader()));
        }

        // DoAction and ListActions: the data-plane offer is an ordinary action.
        List<String> actions = new ArrayList<>();
        plain.listActions().forEach(a -> actions.add(a.getType()));
        assertEquals(List.of(DataPlaneOffer.ACTION), actions);
        Iterator<Result> r = plain.doAction(new Action(DataPlaneOffer.ACTION));
        DataPlaneOffer offer = DataPlaneOffer.decode(r.next().getBody());
        assertEquals(server.dataPlaneAddress().orElseThrow(), offer.address());
        FlightRuntimeException unknown = assertThrows(FlightRuntimeException.class,
            () -> plain.doAction(new Action("no-such-action")).hasNext());
        assertEquals(FlightStatusCode.UNIMPLEMENTED, unknown.status().code());
      }
    }
  }

  @Test
  void plainClientReadsBatchesLargerThanGrpcBuffers() throws Exception {
    java.util.Map<String, String> m = new java.util.HashMap<>(java.util.Map.of(
        "sluice.transport.provider", "tcp", "sluice.transport.bindHost", "127.0.0.1",
        "sluice.transport.secret", SECRET, "sluice.flight.ackTimeoutMs", "10000"));
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, io.sluice.transport.TransportConfig.of(m));
         FlightClient plain = DataPlaneGetTest.plainClient(allocator, server.location())) {
      server.publish("big", TestTables.numeric(allocator, 6, 200_000)); // about 5 MiB a batch
      long rows = 0;
      long sum = 0;
      try (FlightStream s = plain.getStream(SluiceFlightServer.ticket("big"))) {
        while (s.next()) {
          org.apache.arrow.vector.BigIntVector a = (org.apache.arrow.vector.BigIntVector) s.getRoot().getVector("a");
          for (int i = 0; i < a.getValueCount(); i++) {
            sum += a.get(i);
          }
          rows += s.getRoot().getRowCount();
        }
      }
      long n = 6 * 200_000L;
      assertEquals(n, rows);
      assertEquals(n * (n - 1) / 2, sum);
    }
  }

  @Test
  void ourClientAgainstAPlainFlightServerFallsBackToGrpc() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      String expected = TestTables.expectedMixed(allocator, 2, 300);
      NoOpFlightProducer producer = new NoOpFlightProducer() {
        @Override
        public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
          try (DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
               VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
            listener.start(root, dictionaries);
            for (int k = 0; k < 2; k++) {
              TestTables.fillMixed(root, k * 300L, 300);
              listener.putNext();
            }
            listener.completed();
          }
        }
      };
      // The producer closes its root on a gRPC thread after the client has its stream's end, and
      // a plain FlightServer's close does not wait for that thread.
      try (AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
           FlightServer plainServer =
               FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0), producer).build().start();
           SluiceFlightClient client = SluiceFlightClient.connect(allocator,
               Location.forGrpcInsecure("127.0.0.1", plainServer.getPort()),
               config("tcp", SECRET, java.util.Map.of("sluice.flight.unsignedFallback", "true")));
           TableReader r = client.getStream(new Ticket(new byte[] {42}))) {
        assertEquals("grpc", r.dataPath());
        assertTrue(client.fallbackReason().orElseThrow().contains("offers no data plane"),
            client.fallbackReason().get());
        assertEquals(expected, TestTables.render(r));
      }
    }
  }

}
