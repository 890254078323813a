package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.TransportConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.AsyncPutListener;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.auth2.BasicAuthCredentialWriter;
import org.apache.arrow.flight.auth2.BasicCallHeaderAuthenticator;
import org.apache.arrow.flight.grpc.CredentialCallOption;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where a secret is configured, every Flight call presents the bearer token derived from it: calls
 * without it or with another are refused with UNAUTHENTICATED (and change nothing), a plain
 * flight-core client holding it reads what our client reads, and a server without a secret answers
 * every call as before.
 */
class CallAuthenticationTest {
  private static final Map<String, String> PUTS_ON = Map.of("sluice.flight.puts", "true");

  @ParameterizedTest
  @ValueSource(strings = {"none", "wrong"})
  void callsWithoutTheTokenAreRefusedAndChangeNothing(String presented) throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, PUTS_ON));
         FlightClient stranger = presented.equals("none")
             ? FlightClient.builder(allocator, server.location()).build()
             : FlightClient.builder(allocator, server.location())
                 .intercept(CallToken.clientMiddleware(CallToken.derive("not-the-secret-of-this-test"))).build();
         FlightClient member = DataPlaneGetTest.plainClient(allocator, server.location())) {
      server.publish("features", TestTables.mixed(allocator, 2, 100, CompressionUtil.CodecType.NO_COMPRESSION));
      String before = render(member.getStream(SluiceFlightServer.ticket("features")));

      refused(() -> drain(stranger.getStream(SluiceFlightServer.ticket("features"))));
      refused(() -> stranger.getInfo(FlightDescriptor.path("features")));
      refused(() -> stranger.listFlights(Criteria.ALL).forEach(i -> { }));
      refused(() -> stranger.doAction(new Action(DataPlaneOffer.ACTION)).hasNext());
      refused(() -> stranger.listActions().forEach(a -> { }));
      refused(() -> {
        try (FlightClient.ExchangeReaderWriter x = stranger.doExchange(FlightDescriptor.path("features"))) {
          x.getWriter().completed();
          drain(x.getReader());
        }
      });
      for (String target : new String[] {"features", "planted"}) {
        refused(() -> putRows(allocator, stranger, target));
      }

      assertEquals(before, render(member.getStream(SluiceFlightServer.ticket("features"))),
          "a refused put changed the published table");
      assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
          () -> member.getInfo(FlightDescriptor.path("planted"))).status().code(), "a refused put stored a table");
    }
  }

  @Test
  void aPlainFlightClientWithTheTokenReadsWhatOurClientReads() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", SECRET));
           SluiceFlightClient ours = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET));
           FlightClient plain = FlightClient.builder(allocator, server.location()).build()) {
        String expected = TestTables.publishMixed(server, allocator, "mixed", 3, 500,
            CompressionUtil.CodecType.LZ4_FRAME);
        try (TableReader r = ours.getStream(SluiceFlightServer.ticket("mixed"))) {
          assertEquals("tcp", r.dataPath());
          assertEquals(expected, TestTables.render(r));
        }
        // The standard way: the token as a call option on each call (pyarrow: a header of FlightCallOptions).
        CallOption token = CallToken.callOption(CallToken.of(config("tcp", SECRET)).orElseThrow());
        List<String> listed = new ArrayList<>();
        plain.listFlights(Criteria.ALL, token).forEach(i -> listed.add(i.getDescriptor().getPath().get(0)));
        assertEquals(List.of("mixed"), listed);
        var info = plain.getInfo(FlightDescriptor.path("mixed"), token);
        assertEquals(1500, info.getRecords());
        try (FlightStream s = plain.getStream(info.getEndpoints().get(0).getTicket(), token)) {
          assertEquals(expected, render(s));
        }
      }
    }
  }

  @Test
  void ourClientWithAnotherSecretIsRefused() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         SluiceFlightClient wrong = SluiceFlightClient.connect(allocator, server.location(),
             config("tcp", "not-the-secret-of-this-test"));
         SluiceFlightClient none = SluiceFlightClient.connect(allocator, server.location())) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      for (SluiceFlightClient c : List.of(wrong, none)) {
        refused(() -> {
          try (TableReader r = c.getStream(SluiceFlightServer.ticket("t"))) {
            while (r.next()) {
              // nothing may arrive
            }
          }
        });
        assertEquals("grpc", c.dataPlane());
      }
    }
  }

  @Test
  void withoutASecretEveryCallIsAnsweredAsBefore() throws Exception {
    try (BufferAllocator allocator = new RootAllocator()) {
      try (SluiceFlightServer server = server(allocator, config("tcp", null));
           FlightClient plain = FlightClient.builder(allocator, server.location()).build()) {
        String expected = TestTables.publishMixed(server, allocator, "t", 2, 100,
            CompressionUtil.CodecType.NO_COMPRESSION);
        assertEquals(200, plain.getInfo(FlightDescriptor.path("t")).getRecords());
        assertEquals(expected, render(plain.getStream(SluiceFlightServer.ticket("t"))));
      }
    }
  }

  @Test
  void theApplicationsAuthenticatorAdmitsItsOwnCallersBesideTheToken() throws Exception {
    BasicCallHeaderAuthenticator basic = new BasicCallHeaderAuthenticator((user, password) -> {
      if (user.equals("analyst") && password.equals("pw")) {
        return () -> user;
      }
      throw org.apache.arrow.flight.CallStatus.UNAUTHENTICATED.withDescription("bad password").toRuntimeException();
    });
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = SluiceFlightServer.builder(allocator,
             org.apache.arrow.flight.Location.forGrpcInsecure("127.0.0.1", 0)).config(config("tcp", SECRET))
             .headerAuthenticator(basic).start();
         FlightClient plain = FlightClient.builder(allocator, server.location()).build()) {
      server.publish("t", TestTables.numeric(allocator, 1, 10));
      CallOption analyst = new CredentialCallOption(new BasicAuthCredentialWriter("analyst", "pw"));
      CallOption guesser = new CredentialCallOption(new BasicAuthCredentialWriter("analyst", "guess"));
      assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), analyst).getRecords());
      assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(CallToken.derive(SECRET)))
          .getRecords());
      refused(() -> plain.getInfo(FlightDescriptor.path("t"), guesser));
      refused(() -> plain.getInfo(FlightDescriptor.path("t")));
    }
  }

  @Test
  void theTokenIsDerivedOneWayFromTheSecret() {
    String token = CallToken.derive(SECRET);
    assertEquals(token, CallToken.of(config("tcp", SECRET)).orElseThrow());
    assertFalse(token.contains(SECRET));
    assertNotEquals(token, CallToken.derive(SECRET + "x"));
    assertEquals(token, java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(
        io.sluice.transport.SecretKeys.derive(SECRET, "sluice/flight bearer", 32)),
        "the token is the transport's psk expanded under the Flight label");
    assertEquals(token.length(), 43, "base64url of 32 bytes, unpadded");
    assertTrue(token.matches("[A-Za-z0-9_-]+"), token);
    assertTrue(CallToken.of(TransportConfig.of(Map.of())).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> CallToken.derive(""));
    IllegalArgumentException shortOne = assertThrows(IllegalArgumentException.class,
        () -> CallToken.derive("fifteen-bytes!!"));
    assertTrue(shortOne.getMessage().contains("sluice.transport.secret"), shortOne.getMessage());
  }

  private static void refused(Executable call) {
    FlightRuntimeException e = assertThrows(FlightRuntimeException.class, call);
    assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code(), e.toString());
  }

  private static void putRows(BufferAllocator allocator, FlightClient client, String name) {
    try (DictionaryProvider.MapDictionaryProvider dictionaries = TestTables.cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(TestTables.mixedSchema(), allocator)) {
      FlightClient.ClientStreamListener put = client.startPut(FlightDescriptor.path(name), root, dictionaries,
          new AsyncPutListener());
      TestTables.fillMixed(root, 0, 10);
      put.putNext();
      put.completed();
      put.getResult();
    }
  }

  private static void drain(FlightStream s) throws Exception {
    try (s) {
      while (s.next()) {
        // nothing may arrive
      }
    }
  }

  /** What a plain stream delivered, in {@link TestTables#render}'s form; closes the stream. */
  static String render(FlightStream s) throws Exception {
    try (s) {
      StringBuilder out = new StringBuilder();
      out.append(s.getSchema()).append('\n');
      while (s.next()) {
        out.append(TestTables.renderBatch(s.getRoot(), s.getDictionaryProvider()));
      }
      return out.toString();
    }
  }
}
