package io.sluice.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Eventually;
import io.sluice.transport.TransportConfig;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Our client against our server: the data plane on tcp and shm, the fallbacks, and the errors. */
class DataPlaneGetTest {
  static final String SECRET = "flight-test-secret";

  static TransportConfig config(String provider, String secret) {
    return config(provider, secret, Map.of());
  }

  /** A config with {@code extra} keys beside the provider's and the secret. */
  static TransportConfig config(String provider, String secret, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("sluice.transport.provider", provider);
    m.put("sluice.transport.bindHost", "127.0.0.1");
    if (secret != null) {
      m.put("sluice.transport.secret", secret);
    }
    return TransportConfig.of(m);
  }

  /**
   * A config for a client that authenticates its calls with {@code SECRET}'s token but never
   * negotiates the data plane: every stream goes over plain Flight.
   */
  static TransportConfig grpcOnly(String provider) {
    return config(provider, SECRET, Map.of("sluice.flight.dataPlane", "false"));
  }

  /** A plain flight-core client whose every call presents {@code SECRET}'s token. */
  static FlightClient plainClient(BufferAllocator allocator, Location location) {
    return FlightClient.builder(allocator, location).intercept(CallToken.clientMiddleware(token(location))).build();
  }

  /** A token of {@code SECRET} for the server at {@code location}, valid for ten minutes. */
  static String token(Location location) {
    return CallToken.mint(SECRET, CallToken.audienceOf(location), java.time.Duration.ofMinutes(10));
  }

  static SluiceFlightServer server(BufferAllocator allocator, TransportConfig config) throws Exception {
    return SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0)).config(config).start();
  }

  @ParameterizedTest
  @ValueSource(strings = {"tcp", "shm"})
  void everyTypeArrivesOverTheDataPlane(String provider) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config(provider, SECRET))) {
      String expected = TestTables.publishMixed(server, allocator, "mixed", 3, 1000,
          CompressionUtil.CodecType.NO_COMPRESSION);
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config(provider, SECRET))) {
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("mixed"))) {
          assertEquals(provider, r.dataPath());
          assertEquals(expected, TestTables.render(r));
        }
        // a ticket may be used again: a new stream of the same table
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("mixed"))) {
          assertEquals(expected, TestTables.render(r));
        }
      }
      // The server withdraws a stream's access on its own threads as the stream ends.
      Eventually.reaches("streams whose reader may still READ the table, after both ended", 0, server::activeGrants);
    }
  }

  @Test
  void compressedBatchesAreDecompressedByTheReader() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET))) {
      String expected = TestTables.publishMixed(server, allocator, "zstd", 2, 1000, CompressionUtil.CodecType.ZSTD);
      server.publish("lz4", TestTables.mixed(allocator, 2, 1000, CompressionUtil.CodecType.LZ4_FRAME));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
          config("tcp", SECRET))) {
        for (String name : new String[] {"zstd", "lz4"}) {
          try (TableReader r = client.getStream(SluiceFlightServer.ticket(name))) {
            assertEquals("tcp", r.dataPath());
            assertEquals(expected, TestTables.render(r), name);
          }
        }
      }
    }
  }

  @Test
  void aClientWithTheDataPlaneOffReadsOverGrpc() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET))) {
      String expected = TestTables.publishMixed(server, allocator, "t", 2, 100,
          CompressionUtil.CodecType.NO_COMPRESSION);
      try (SluiceFlightClient plain = SluiceFlightClient.connect(allocator, server.location(), grpcOnly("tcp"));
           TableReader r = plain.getStream(SluiceFlightServer.ticket("t"))) {
        assertEquals("grpc", r.dataPath());
        assertTrue(plain.fallbackReason().orElseThrow().contains("sluice.flight.dataPlane"),
            plain.fallbackReason().get());
        assertEquals(expected, TestTables.render(r));
      }
    }
  }

  @Test
  void anUnsignedNoIsNotHonouredAndAClientAskingForEncryptionNeverFallsBackToPlaintext() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", null))) {
      server.publish("t", TestTables.numeric(allocator, 2, 10));
      // The server's "no data plane" carries no signature: anybody on the path could have sent it.
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> client.getStream(SluiceFlightServer.ticket("t")).close());
        assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("sluice.flight.unsignedFallback"), e.getMessage());
      }
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET,
          Map.of("sluice.flight.unsignedFallback", "true", "sluice.transport.encryption", "true")))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> client.getStream(SluiceFlightServer.ticket("t")).close());
        assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("sluice.transport.encryption"), e.getMessage());
      }
    }
  }

  /**
   * The client's own transport cannot start (here: the port it is told to listen on is taken).
   * That is no "no" the server signed: the client fails closed instead of reading over gRPC.
   */
  @Test
  void aClientWhoseTransportCannotStartDoesNotFallBackToPlaintext() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      server.publish("t", TestTables.numeric(allocator, 2, 10));
      TransportConfig blocked = config("tcp", SECRET, Map.of("sluice.transport.bindHost", "127.0.0.1",
          "sluice.transport.port", Integer.toString(taken.getLocalPort())));
      try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), blocked)) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> client.getStream(SluiceFlightServer.ticket("t")).close());
        assertEquals(FlightStatusCode.UNAVAILABLE, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("transport did not start"), e.getMessage());
      }
    }
  }

  /**
   * A signed refusal names the server's audience: relayed to a client of another server (here, a
   * client that knows the server under another location), it is no signed refusal at all.
   */
  @Test
  void aSignedNoForAnotherServerIsNotHonoured() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0))
             .config(config("verbs", SECRET)).start();
         FlightClient flight = plainClient(allocator, server.location())) {
      TransportConfig mine = config("tcp", SECRET);
      var own = new io.sluice.flight.client.Negotiator(mine, CallToken.of(mine), server.location()).negotiate(flight);
      assertTrue(own.authenticated(), own.reason());
      var relayed = new io.sluice.flight.client.Negotiator(mine, CallToken.of(mine),
          Location.forGrpcInsecure("127.0.0.1", 1)).negotiate(flight);
      assertFalse(relayed.authenticated(), relayed.reason());
      assertTrue(relayed.reason().contains("unsigned"), relayed.reason());
    }
  }

  @Test
  void aSignedNoIsHonoured() throws Exception {
    // A server with the secret whose transport cannot start (verbs, whose jar this module's tests lack).
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = SluiceFlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0))
             .config(config("verbs", SECRET)).start();
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      assertFalse(server.dataPlane().isPresent());
      server.publish("t", TestTables.numeric(allocator, 2, 10));
      try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
        assertEquals("grpc", r.dataPath());
      }
      assertTrue(client.fallbackReason().orElseThrow().contains("(signed)"), client.fallbackReason().get());
    }
  }

  @Test
  void serverWithoutSecretServesPlainFlight() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", null))) {
        assertFalse(server.dataPlane().isPresent());
        server.publish("t", TestTables.numeric(allocator, 2, 10));
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
                config("tcp", SECRET, Map.of("sluice.flight.unsignedFallback", "true")));
             TableReader r = client.getStream(SluiceFlightServer.ticket("t"))) {
          assertEquals("grpc", r.dataPath());
          int rows = 0;
          while (r.next()) {
            rows += r.getRoot().getRowCount();
          }
          assertEquals(20, rows);
        }
      }
    }
  }

  @Test
  void unknownTicketIsNotFoundOnBothPaths() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET))) {
      for (TransportConfig c : new TransportConfig[] {config("tcp", SECRET), grpcOnly("tcp")}) {
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), c)) {
          for (Ticket t : new Ticket[] {SluiceFlightServer.ticket("nope"), new Ticket(new byte[] {1, 2, 3})}) {
            FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> {
              try (TableReader r = client.getStream(t)) {
                r.next();
              }
            });
            assertEquals(FlightStatusCode.NOT_FOUND, e.status().code(), e.toString());
          }
        }
      }
    }
  }

  @Test
  void emptyTableAndZeroRowBatches() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", SECRET))) {
        server.publish("empty", TestTables.mixed(allocator, 0, 0, CompressionUtil.CodecType.NO_COMPRESSION));
        server.publish("zero", TestTables.mixed(allocator, 3, 0, CompressionUtil.CodecType.NO_COMPRESSION));
        try (SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(),
            config("tcp", SECRET))) {
          try (TableReader r = client.getStream(SluiceFlightServer.ticket("empty"))) {
            assertEquals("tcp", r.dataPath());
            assertEquals(TestTables.mixedSchema().getFields().size(), r.getSchema().getFields().size());
            assertFalse(r.next());
          }
          try (TableReader r = client.getStream(SluiceFlightServer.ticket("zero"))) {
            int batches = 0;
            while (r.next()) {
              assertEquals(0, r.getRoot().getRowCount());
              batches++;
            }
            assertEquals(3, batches);
          }
        }
      }
    }
  }
}
