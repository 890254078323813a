package io.sluice.flight;

import static io.sluice.flight.DataPlaneGetTest.SECRET;
import static io.sluice.flight.DataPlaneGetTest.config;
import static io.sluice.flight.DataPlaneGetTest.server;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.loader.FlightLoader;
import io.sluice.flight.loader.LoadedShard;
import io.sluice.flight.loader.Shard;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ProductThreads;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.Transport;
import io.sluice.transport.Transports;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Action;
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
 * data-plane gets nobody pulls, plain streams nobody reads, puts that fill the server. Our own
 * clients keep within the share of gets the server offers: more gets, or a deeper prefetch, wait
 * their turn, and a get refused because others hold the server's threads is asked again.
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
         Hog hog = new Hog(allocator, server);
         SluiceFlightClient other = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("big", TestTables.numeric(allocator, 4, 1000));
      String expected = TestTables.publishMixed(server, allocator, "small", 2, 100,
          CompressionUtil.CodecType.NO_COMPRESSION);
      assertEquals(4, hog.offer.maxStreams(), "the offer's share of gets per client");
      int before = ProductThreads.count();
      // A client that ignores the offer's share: our own clients never open more than it.
      for (int i = 0; i < 200; i++) {
        hog.get("big"); // and never pulled
      }
      // The last get is refused, as is every one past the client's share...
      FlightRuntimeException e = assertThrows(FlightRuntimeException.class, () -> hog.gets.get(199).getReader().next());
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
    }
  }

  @Test
  void aClientOpeningMoreGetsThanTheServerAllowsItReadsThemAllInTurn() throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGetsPerClient", "4");
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 3, 1000));
      // Each stream holds its first batch until four streams have one: the four the server allows
      // this client are open at once, and the other four can only have waited for them.
      CountDownLatch fourOpen = new CountDownLatch(4);
      Set<Integer> started = ConcurrentHashMap.newKeySet();
      ParallelReader.Result r = ParallelReader.read(client, Collections.nCopies(8, SluiceFlightServer.ticket("t")),
          (stream, batch) -> {
            if (started.add(stream)) {
              fourOpen.countDown();
              await(fourOpen, "four streams open at once");
            }
          });
      assertEquals(Collections.nCopies(8, 3000L), r.rows());
      assertEquals("tcp", r.dataPath());
      assertEquals(java.util.OptionalInt.of(4), client.maxDataPlaneGets());
      AuthorizationTest.awaitNoStreams(server);
    }
  }

  @Test
  void aLoaderPrefetchingPastTheServersShareReadsEveryShardOnce() throws Exception {
    int shards = 24;
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGetsPerClient", "4");
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds))) {
      List<Shard> list = new ArrayList<>();
      for (int k = 0; k < shards; k++) {
        String name = String.format("t.s%02d", k);
        server.publish(name, TestTables.numeric(allocator, 2, 500 + k));
        list.add(new Shard(name, server.location(), SluiceFlightServer.ticket(name), -1, -1));
      }
      Map<String, Long> rows = new HashMap<>();
      try (FlightLoader loader = FlightLoader.builder(allocator, list).prefetch(16).epochs(1)
          .config(config("tcp", SECRET)).build()) {
        Optional<LoadedShard> s;
        while ((s = loader.next(Duration.ofMinutes(1))).isPresent()) {
          try (LoadedShard shard = s.get()) {
            assertEquals("tcp", shard.dataPath());
            assertEquals(null, rows.put(shard.shard().name(), shard.rows()), "shard read twice: " + shard.shard());
          }
        }
        assertTrue(loader.finished());
        assertEquals(shards, loader.streamsOpened());
      }
      assertEquals(shards, rows.size(), rows.toString());
      for (int k = 0; k < shards; k++) {
        assertEquals(2L * (500 + k), rows.get(String.format("t.s%02d", k)));
      }
      AuthorizationTest.awaitNoStreams(server);
    }
  }

  @Test
  void aGetThatFindsTheShareHeldFailsAtItsDeadlineNamingTheBound() throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGetsPerClient", "2");
    try (BufferAllocator allocator = new RootAllocator();
         AutoCloseable released = () -> SecureDefaultsTest.awaitReleased(allocator);
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      TableReader first = client.getStream(SluiceFlightServer.ticket("t"));
      try (TableReader second = client.getStream(SluiceFlightServer.ticket("t"))) {
        FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
            () -> client.getStream(SluiceFlightServer.ticket("t"), Duration.ofMillis(100)));
        assertEquals(FlightStatusCode.TIMED_OUT, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("holds 2 ") && e.getMessage().contains("sluice.flight.dataPlaneGetsPerClient"),
            e.getMessage());
        first.close(); // its place is free again
        try (TableReader third = client.getStream(SluiceFlightServer.ticket("t"), Duration.ofSeconds(30))) {
          assertEquals(200, rows(third));
        }
        assertEquals(200, rows(second));
      }
      AuthorizationTest.awaitNoStreams(server);
    }
  }

  @Test
  void aGetRefusedBecauseOtherClientsHoldEveryGetThreadIsAskedAgain() throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGets", "2", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog hog = new Hog(allocator, server);
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      hog.get("t");
      hog.get("t");
      Eventually.reaches("data-plane gets the hog holds", 2, server::activeDataPlaneStreams);
      CompletableFuture<Long> read = CompletableFuture.supplyAsync(() -> {
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"), Duration.ofMinutes(1))) {
          return rows(r);
        }
      });
      // Two grants were the hog's; a fourth is the client's asking again after a refusal.
      Eventually.matches("grants the server issued", Eventually.DEADLINE, () -> metric(server, "grants.issued"),
          n -> n >= 4);
      assertFalse(read.isDone(), "the client's get was served while the hog held every get thread");
      hog.close();
      assertEquals(200L, read.get(1, TimeUnit.MINUTES));
    }
  }

  @Test
  void aGetWhoseGrantIsRefusedForLoadIsAskedAgainUntilAGrantIsFree() throws Exception {
    // Every peer on loopback is one host, whose one unredeemed grant the hog takes: the client's
    // grant requests are refused for load until the hog redeems it.
    Map<String, String> bounds = Map.of("sluice.flight.grantsPerHost", "1", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog hog = new Hog(allocator, server);
         SluiceFlightClient client = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      byte[] held = hog.grant();
      long served = metric(server, "transport.served.requests.count");
      CompletableFuture<Long> read = CompletableFuture.supplyAsync(() -> {
        try (TableReader r = client.getStream(SluiceFlightServer.ticket("t"), Duration.ofMinutes(1))) {
          return rows(r);
        }
      });
      Eventually.matches("grant requests the client asked again", Eventually.DEADLINE,
          () -> metric(server, "transport.served.requests.count") - served, n -> n >= 3);
      assertFalse(read.isDone(), "the client's get was served while the hog held its host's grant");
      assertEquals(1, metric(server, "grants.issued"), "grants issued: the hog's alone");
      hog.open(held, "t"); // redeemed: the host's place is free
      assertEquals(200L, read.get(1, TimeUnit.MINUTES));
    }
  }

  @Test
  void aGetCancelledAsSoonAsItIsAskedForEndsOnTheServerAtOnce() throws Exception {
    // An acknowledgement deadline longer than the test: only the cancellation can end the gets.
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGetsPerClient", "64",
        "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog hog = new Hog(allocator, server)) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      for (int i = 0; i < 32; i++) {
        hog.get("t");
        hog.gets.get(i).getReader().cancel("the reader gave up at once", null);
      }
      Eventually.reaches("data-plane gets still served after their readers cancelled", 0,
          server::activeDataPlaneStreams);
    }
  }

  @Test
  void identitiesMadeUpOnOneHostHoldNoMoreThanItsShareOfGetsAndAnotherHostIsServed() throws Exception {
    String elsewhere = anotherAddressOfThisHost();
    // The honest client reaches the server's transport at another address of this host (another
    // host, as the server counts), the identities made up on one host at loopback.
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGets", "8", "sluice.flight.dataPlaneGetsPerClient",
        "2", "sluice.flight.dataPlaneGetsPerHost", "4", "sluice.flight.ackTimeoutMs", "120000",
        "sluice.transport.bindHost", "0.0.0.0", "sluice.transport.advertiseHost", elsewhere);
    List<Hog> hogs = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, everyInterface(config("tcp", SECRET, bounds)));
         SluiceFlightClient honest = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("big", TestTables.numeric(allocator, 4, 1000));
      String expected = TestTables.publishMixed(server, allocator, "small", 2, 100,
          CompressionUtil.CodecType.NO_COMPRESSION);
      try {
        // Six identities, each within its own share of 2: twelve gets, the total's 8 and more.
        for (int i = 0; i < 6; i++) {
          Hog hog = new Hog(allocator, server, "127.0.0.1");
          hogs.add(hog);
          assertEquals(2, hog.offer.maxStreams(), "the offer's share of gets per client");
          hog.get("big");
          hog.get("big");
        }
        int served = 0;
        List<String> refusals = new ArrayList<>();
        for (Hog hog : hogs) {
          for (FlightClient.ExchangeReaderWriter x : hog.gets) {
            try {
              assertTrue(x.getReader().next(), "a get served sends its schema"); // and is never pulled
              served++;
            } catch (FlightRuntimeException e) {
              assertEquals(FlightStatusCode.RESOURCE_EXHAUSTED, e.status().code(), e.toString());
              refusals.add(e.getMessage());
            }
          }
        }
        assertEquals(4, served, "gets served to six identities of one host; refused: " + refusals);
        assertTrue(refusals.stream().allMatch(m -> m.contains("sluice.flight.dataPlaneGetsPerHost")),
            refusals.toString());
        try (TableReader r = honest.getStream(SluiceFlightServer.ticket("small"), Duration.ofSeconds(30))) {
          assertEquals("tcp", r.dataPath());
          assertEquals(expected, TestTables.render(r));
        }
      } finally {
        for (Hog hog : hogs) {
          hog.close();
        }
      }
    }
  }

  @Test
  void identitiesMadeUpOnOneHostHoldNoMoreThanItsShareOfGrantsAndAnotherHostIsServed() throws Exception {
    String elsewhere = anotherAddressOfThisHost();
    Map<String, String> bounds = Map.of("sluice.flight.grantsPerClient", "4", "sluice.flight.grantsPerHost", "16",
        "sluice.transport.advertiseHost", elsewhere);
    List<Hog> hogs = new ArrayList<>();
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, everyInterface(config("tcp", SECRET, bounds)));
         SluiceFlightClient honest = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      try {
        int granted = 0;
        List<String> refusals = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          Hog hog = new Hog(allocator, server, "127.0.0.1");
          hogs.add(hog);
          for (int k = 0; k < 4; k++) { // each identity within its own quota
            try {
              hog.grant();
              granted++;
            } catch (java.util.concurrent.ExecutionException e) {
              assertInstanceOf(ResourceExhaustedException.class, e.getCause(), "a grant refused for load");
              refusals.add(String.valueOf(e.getCause()));
            }
          }
        }
        assertEquals(16, granted, "grants held unredeemed by eight identities of one host; refused: " + refusals);
        assertTrue(refusals.stream().allMatch(m -> m.contains("sluice.flight.grantsPerHost")), refusals.toString());
        try (TableReader r = honest.getStream(SluiceFlightServer.ticket("t"), Duration.ofSeconds(30))) {
          assertEquals("tcp", r.dataPath());
          assertEquals(200, rows(r));
        }
      } finally {
        for (Hog hog : hogs) {
          hog.close();
        }
      }
    }
  }

  @Test
  void grantsPastTheServersTotalAreRefusedAndEvictNobody() throws Exception {
    // No quota of a node or a host binds: the total does. A keeper takes a grant first; a flood of
    // grants from one identity reaches the total; the keeper's grant still opens its get.
    Map<String, String> bounds = Map.of("sluice.flight.grantsPerClient", "1000000",
        "sluice.flight.grantsPerHost", "1000000", "sluice.flight.ackTimeoutMs", "120000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog keeper = new Hog(allocator, server);
         Hog flood = new Hog(allocator, server)) {
      server.publish("t", TestTables.numeric(allocator, 2, 100));
      byte[] kept = keeper.grant();
      int granted = 1;
      List<String> refusals = new ArrayList<>();
      List<CompletableFuture<java.nio.ByteBuffer>> inFlight = new ArrayList<>();
      for (int sent = 0; sent < 65_536 + 64; ) {
        for (int k = 0; k < 64; k++, sent++) {
          inFlight.add(flood.connection.request(DataPlaneProtocol.grantRequest()));
        }
        for (CompletableFuture<java.nio.ByteBuffer> f : inFlight) {
          try {
            f.get(30, TimeUnit.SECONDS);
            granted++;
          } catch (java.util.concurrent.ExecutionException e) {
            assertInstanceOf(ResourceExhaustedException.class, e.getCause(), "a grant refused for load");
            refusals.add(String.valueOf(e.getCause()));
          }
        }
        inFlight.clear();
      }
      assertEquals(65_536, granted, "grants held unredeemed in all");
      assertEquals(65, refusals.size(), "grant requests past the total, the keeper's grant among those held");
      assertTrue(refusals.get(0).contains("65536 unredeemed"), refusals.get(0));
      keeper.open(kept, "t");
      assertTrue(keeper.gets.get(0).getReader().next(), "the get of the first grant was refused");
    }
  }

  @Test
  void aFullyReadGetWhoseReaderNeverEndsTheCallIsEndedAtTheAckTimeoutAndItsPlaceIsFree() throws Exception {
    // One get thread in all: while the idle reader's get holds it, no other get is served.
    Map<String, String> bounds = Map.of("sluice.flight.dataPlaneGets", "1", "sluice.flight.ackTimeoutMs", "1000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog idle = new Hog(allocator, server);
         SluiceFlightClient other = SluiceFlightClient.connect(allocator, server.location(), config("tcp", SECRET))) {
      server.publish("t", TestTables.numeric(allocator, 3, 100));
      byte[] grant = idle.grant();
      idle.open(grant, "t");
      FlightClient.ExchangeReaderWriter x = idle.gets.get(0);
      assertTrue(x.getReader().next(), "the get's schema");
      assertEquals(3, idle.takeEverything(grant), "bodies announced");
      // Every body taken and acknowledged; the reader never half-closes the call. It waits for the
      // call's end on a thread of its own: where the server never ends it, the wait's deadline does.
      CompletableFuture<Boolean> end = CompletableFuture.supplyAsync(() -> x.getReader().next());
      java.util.concurrent.ExecutionException ended = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> end.get(30, TimeUnit.SECONDS));
      FlightRuntimeException e = (FlightRuntimeException) ended.getCause();
      assertEquals(FlightStatusCode.TIMED_OUT, e.status().code(), e.toString());
      assertTrue(e.getMessage().contains("sluice.flight.ackTimeoutMs"), e.getMessage());
      AuthorizationTest.awaitNoStreams(server);
      try (TableReader r = other.getStream(SluiceFlightServer.ticket("t"), Duration.ofSeconds(30))) {
        assertEquals(300, rows(r));
      }
    }
  }

  @Test
  void aDataPlanePutWhoseWriterSendsNothingIsEndedAtTheAckTimeout() throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.puts", "true", "sluice.flight.ackTimeoutMs", "1000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         Hog writer = new Hog(allocator, server)) {
      byte[] command = DataPlaneProtocol.encode(new DataPlaneProtocol.OpenPut(writer.grant(),
          FlightDescriptor.path("idle").serialize().array(), writer.transport.localAddress()));
      FlightClient.ExchangeReaderWriter x = writer.flight.doExchange(FlightDescriptor.command(command));
      writer.gets.add(x);
      // The writer announces no batch and never half-closes.
      CompletableFuture<Boolean> end = CompletableFuture.supplyAsync(() -> x.getReader().next());
      java.util.concurrent.ExecutionException ended = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> end.get(30, TimeUnit.SECONDS));
      FlightRuntimeException e = (FlightRuntimeException) ended.getCause();
      assertEquals(FlightStatusCode.TIMED_OUT, e.status().code(), e.toString());
      AuthorizationTest.awaitNoStreams(server);
      assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
          () -> writer.flight.getInfo(FlightDescriptor.path("idle"))).status().code());
    }
  }

  @Test
  void aPlainPutWhoseWriterSendsNothingIsEndedAtTheAckTimeout() throws Exception {
    Map<String, String> bounds = Map.of("sluice.flight.puts", "true", "sluice.flight.ackTimeoutMs", "1000");
    try (BufferAllocator allocator = new RootAllocator();
         SluiceFlightServer server = server(allocator, config("tcp", SECRET, bounds));
         FlightClient flight = DataPlaneGetTest.plainClient(allocator, server.location());
         VectorSchemaRoot root = VectorSchemaRoot.create(new org.apache.arrow.vector.types.pojo.Schema(List.of(
             org.apache.arrow.vector.types.pojo.Field.nullable("a",
                 new org.apache.arrow.vector.types.pojo.ArrowType.Int(64, true)))), allocator)) {
      org.apache.arrow.flight.SyncPutListener result = new org.apache.arrow.flight.SyncPutListener();
      FlightClient.ClientStreamListener put = flight.startPut(FlightDescriptor.path("idle"), root, result);
      try {
        // The writer sends its schema, then no batch, and never completes.
        CompletableFuture<Void> end = CompletableFuture.runAsync(result::getResult);
        java.util.concurrent.ExecutionException ended = assertThrows(java.util.concurrent.ExecutionException.class,
            () -> end.get(30, TimeUnit.SECONDS));
        FlightRuntimeException e = (FlightRuntimeException) ended.getCause();
        assertEquals(FlightStatusCode.TIMED_OUT, e.status().code(), e.toString());
        assertTrue(e.getMessage().contains("sluice.flight.ackTimeoutMs"), e.getMessage());
        assertEquals(FlightStatusCode.NOT_FOUND, assertThrows(FlightRuntimeException.class,
            () -> flight.getInfo(FlightDescriptor.path("idle"))).status().code());
      } finally {
        put.error(new IllegalStateException("the test is over"));
        result.close();
      }
    }
  }

  /** {@code config}, its transport listening on every interface of this host. */
  private static io.sluice.transport.TransportConfig everyInterface(io.sluice.transport.TransportConfig config) {
    return config.with(Map.of("sluice.transport.bindHost", "0.0.0.0"));
  }

  /**
   * An address of this host other than loopback, which the server counts as another host than
   * loopback's; the test is skipped on a host with none.
   */
  private static String anotherAddressOfThisHost() throws Exception {
    for (java.net.NetworkInterface nic : Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
      if (!nic.isUp() || nic.isLoopback()) {
        continue;
      }
      for (java.net.InetAddress a : Collections.list(nic.getInetAddresses())) {
        if (a instanceof java.net.Inet4Address && !a.isLinkLocalAddress()) {
          return a.getHostAddress();
        }
      }
    }
    org.junit.jupiter.api.Assumptions.abort("this host has no IPv4 address but loopback");
    throw new AssertionError("unreachable");
  }

  /** A client that speaks the data-plane protocol itself and opens gets without heeding the offer's share. */
  private static final class Hog implements AutoCloseable {
    final FlightClient flight;
    final Transport transport;
    final DataPlaneOffer offer;
    final Connection connection;
    final List<FlightClient.ExchangeReaderWriter> gets = new ArrayList<>();

    Hog(BufferAllocator allocator, SluiceFlightServer server) throws Exception {
      this(allocator, server, null);
    }

    /** A hog (an identity of its own) that reaches the server's transport at {@code host}, if given. */
    Hog(BufferAllocator allocator, SluiceFlightServer server, String host) throws Exception {
      flight = DataPlaneGetTest.plainClient(allocator, server.location());
      transport = Transports.open(config("tcp", SECRET), MessageHandler.REJECT_ALL);
      offer = DataPlaneOffer.decode(flight.doAction(new Action(DataPlaneOffer.ACTION)).next().getBody());
      io.sluice.transport.NodeAddress at = host == null ? offer.address()
          : new io.sluice.transport.NodeAddress(host, offer.address().port());
      connection = transport.connect(at).get(30, TimeUnit.SECONDS);
    }

    byte[] grant() throws Exception {
      return DataPlaneProtocol.grantReply(
          connection.request(DataPlaneProtocol.grantRequest()).get(30, TimeUnit.SECONDS));
    }

    void get(String table) throws Exception {
      open(grant(), table);
    }

    void open(byte[] grant, String table) {
      byte[] command = DataPlaneProtocol.encode(new OpenGet(grant, SluiceFlightServer.ticket(table).getBytes()));
      gets.add(flight.doExchange(FlightDescriptor.command(command)));
    }

    /**
     * Pulls every announcement of the get of {@code grant} and acknowledges every body, READing
     * none; returns how many bodies were announced.
     */
    long takeEverything(byte[] grant) throws Exception {
      long announced = 0;
      boolean last = false;
      while (!last) {
        DataPlaneProtocol.Announcement a = DataPlaneProtocol.decodeAnnouncement(connection.request(
            DataPlaneProtocol.encode(new DataPlaneProtocol.Pull(grant, announced, 64, false))).get(30, TimeUnit.SECONDS));
        announced += a.bodies().size();
        last = a.last();
      }
      connection.request(DataPlaneProtocol.encode(new DataPlaneProtocol.Pull(grant, announced, 0, false)))
          .get(30, TimeUnit.SECONDS);
      return announced;
    }

    @Override
    public void close() throws Exception {
      for (FlightClient.ExchangeReaderWriter x : gets) {
        try {
          x.getReader().cancel("done", null);
          x.close();
        } catch (Exception e) {
          // cancelled and refused calls report it on close
        }
      }
      gets.clear();
      connection.close();
      transport.close();
      flight.close();
    }
  }

  private static long rows(TableReader r) {
    long n = 0;
    while (r.next()) {
      n += r.getRoot().getRowCount();
    }
    return n;
  }

  private static long metric(SluiceFlightServer server, String name) {
    return server.metrics().stream().filter(m -> m.name().equals(name)).findFirst().orElseThrow().value();
  }

  private static void await(CountDownLatch latch, String what) {
    try {
      if (!latch.await(1, TimeUnit.MINUTES)) {
        throw new IllegalStateException("not within a minute: " + what);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted waiting for: " + what, e);
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
