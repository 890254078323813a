package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.transport.TransportConfig;
import java.time.Duration;
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
 * Where a secret is configured, every Flight call presents a bearer token of it for that server,
 * not yet expired: calls without one, with one of another secret, for another server, expired or
 * altered are refused with UNAUTHENTICATED (and change nothing), a plain
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
                 .intercept(CallToken.clientMiddleware(CallToken.mint("not-the-secret-of-this-test",
                     CallToken.audienceOf(server.location()), Duration.ofMinutes(5)))).build();
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
        CallOption token = CallToken.callOption(DataPlaneGetTest.token(server.location()));
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
      // The wrong secret's client learns it at the data-plane offer, refused UNAUTHENTICATED; that
      // answer is not signed, so it fails its stream (UNAVAILABLE, naming it) rather than fall back.
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
          () -> wrong.getStream(SluiceFlightServer.ticket("t")).close());
      assertTrue(e.getMessage().contains("UNAUTHENTICATED"), e.getMessage());
      for (SluiceFlightClient c : List.of(none)) {
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
      assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(DataPlaneGetTest.token(server.location())))
          .getRecords());
      refused(() -> plain.getInfo(FlightDescriptor.path("t"), guesser));
      refused(() -> plain.getInfo(FlightDescriptor.path("t")));
    }
  }

  @Test
  void aTokenForOneServerIsRefusedByAnotherWithTheSameSecret() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer a = server(allocator, config("tcp", SECRET));
         SluiceFlightServer b = server(allocator, config("tcp", SECRET));
         FlightClient toB = FlightClient.builder(allocator, b.location()).build()) {
      a.publish("t", TestTables.numeric(allocator, 1, 10));
      b.publish("t", TestTables.numeric(allocator, 1, 10));
      String forA = DataPlaneGetTest.token(a.location());
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
          () -> toB.getInfo(FlightDescriptor.path("t"), CallToken.callOption(forA)));
      assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code(), e.toString());
      assertTrue(e.getMessage().contains("not for this server"), e.getMessage());
      assertEquals(10, toB.getInfo(FlightDescriptor.path("t"),
          CallToken.callOption(DataPlaneGetTest.token(b.location()))).getRecords());
    }
  }

  @Test
  void aServerAcceptsTheAudiencesItWasConfiguredWith() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET,
             Map.of("sluice.flight.tokenAudiences", "run-42, grpc://flight.example:8815")));
         FlightClient plain = FlightClient.builder(allocator, server.location()).build()) {
      server.publish("t", TestTables.numeric(allocator, 1, 10));
      for (String audience : List.of("run-42", "grpc://Flight.Example:8815/")) {
        String token = CallToken.mint(SECRET, audience, Duration.ofMinutes(1));
        assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(token)).getRecords());
      }
      refused(() -> plain.getInfo(FlightDescriptor.path("t"),
          CallToken.callOption(CallToken.mint(SECRET, "run-43", Duration.ofMinutes(1)))));
    }
  }

  @Test
  void expiredAndTamperedTokensAreRefused() throws Exception {
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET));
         FlightClient plain = FlightClient.builder(allocator, server.location()).build()) {
      server.publish("t", TestTables.numeric(allocator, 1, 10));
      String audience = CallToken.audienceOf(server.location());
      CallToken.Key key = CallToken.key(SECRET);
      String expired = key.mint(audience, java.time.Instant.now().minusSeconds(1));
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
          () -> plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(expired)));
      assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code(), e.toString());
      assertTrue(e.getMessage().contains("expired"), e.getMessage());

      String good = key.mint(audience, java.time.Instant.now().plusSeconds(600));
      byte[] bytes = java.util.Base64.getUrlDecoder().decode(good);
      // a later expiry, the audience of another server, a flipped MAC bit: each breaks the MAC
      for (int at : new int[] {5, 12, bytes.length - 1}) {
        byte[] tampered = bytes.clone();
        tampered[at] ^= 0x01;
        String t = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(tampered);
        FlightRuntimeException f = assertThrows(FlightRuntimeException.class,
            () -> plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(t)));
        assertEquals(FlightStatusCode.UNAUTHENTICATED, f.status().code(), f.toString());
        assertTrue(f.getMessage().contains("not this server's"), f.getMessage());
      }
      refused(() -> plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption("not base64 !")));
      assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(good)).getRecords());

      // A token for a century: valid MAC, right audience, but further ahead than the server takes.
      String forever = key.mint(audience, java.time.Instant.now().plus(Duration.ofDays(36_500)));
      FlightRuntimeException g = assertThrows(FlightRuntimeException.class,
          () -> plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(forever)));
      assertEquals(FlightStatusCode.UNAUTHENTICATED, g.status().code(), g.toString());
      assertTrue(g.getMessage().contains("sluice.flight.tokenMaxValidityMs"), g.getMessage());
      String day = key.mint(audience, java.time.Instant.now().plus(Duration.ofDays(1)));
      assertEquals(10, plain.getInfo(FlightDescriptor.path("t"), CallToken.callOption(day)).getRecords());
    }
  }

  @Test
  void anAudienceIsTheSameLocationWhateverTheCaseOfItsSchemeAndHost() {
    assertEquals("grpc+tcp://host:8815", CallToken.audience("GRPC+TCP://Host:8815/"));
    assertEquals("grpc://host:8815", CallToken.audience("grpc://HOST:8815"));
    assertEquals("run-43", CallToken.audience(" run-43 "));
  }

  @Test
  void aTokenNamesItsAudienceAndExpiryUnderAMac() throws Exception {
    CallToken.Key key = CallToken.key(SECRET);
    java.time.Instant expires = java.time.Instant.ofEpochSecond(2_000_000_000L);
    String token = key.mint("grpc://Host:8815/", expires);
    assertTrue(token.matches("[A-Za-z0-9_-]+"), token);
    assertFalse(token.contains(SECRET));
    byte[] bytes = java.util.Base64.getUrlDecoder().decode(token);
    assertEquals(CallToken.VERSION, bytes[0]);
    assertEquals(1 + 8 + "grpc://host:8815".length() + 32, bytes.length);
    java.time.Clock before = java.time.Clock.fixed(expires.minusSeconds(1), java.time.ZoneOffset.UTC);
    assertEquals(new CallToken.Claims("grpc://host:8815", expires),
        key.verify(token, java.util.Set.of("grpc://host:8815"), before));
    assertThrows(CallToken.InvalidTokenException.class, () -> key.verify(token, java.util.Set.of("grpc://host:8815"),
        java.time.Clock.fixed(expires, java.time.ZoneOffset.UTC)));
    assertThrows(CallToken.InvalidTokenException.class,
        () -> CallToken.key("the-secret-of-another-deployment").verify(token, java.util.Set.of("grpc://host:8815"), before));
    assertTrue(CallToken.of(TransportConfig.of(Map.of())).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> CallToken.key(""));
    IllegalArgumentException shortOne = assertThrows(IllegalArgumentException.class,
        () -> CallToken.key("fifteen-bytes!!"));
    assertTrue(shortOne.getMessage().contains("sluice.transport.secret"), shortOne.getMessage());
    assertThrows(IllegalArgumentException.class, () -> CallToken.mint(SECRET, " ", Duration.ofMinutes(1)));
    assertNotEquals(token, CallToken.key(SECRET + "x").mint("grpc://host:8815", expires));
  }

  @Test
  void ourClientRenewsItsTokenBeforeItExpires() {
    java.util.concurrent.atomic.AtomicReference<java.time.Instant> now =
        new java.util.concurrent.atomic.AtomicReference<>(java.time.Instant.ofEpochSecond(1_000_000));
    java.time.Clock clock = new java.time.Clock() {
      @Override
      public java.time.ZoneId getZone() {
        return java.time.ZoneOffset.UTC;
      }

      @Override
      public java.time.Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public java.time.Instant instant() {
        return now.get();
      }
    };
    CallToken.Key key = CallToken.key(SECRET);
    var tokens = new io.sluice.flight.client.RenewingToken(key, "grpc://h:1", Duration.ofSeconds(60), clock);
    String first = tokens.get();
    now.set(now.get().plusSeconds(29));
    assertEquals(first, tokens.get());
    now.set(now.get().plusSeconds(2));
    String second = tokens.get();
    assertNotEquals(first, second);
    assertThrows(CallToken.InvalidTokenException.class,
        () -> key.verify(first, java.util.Set.of("grpc://h:1"), java.time.Clock.fixed(now.get().plusSeconds(31),
            java.time.ZoneOffset.UTC)));
    assertDoesNotThrow(() -> key.verify(second, java.util.Set.of("grpc://h:1"),
        java.time.Clock.fixed(now.get().plusSeconds(31), java.time.ZoneOffset.UTC)));
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
