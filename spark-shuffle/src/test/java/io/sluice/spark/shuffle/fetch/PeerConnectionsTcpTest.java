package io.sluice.spark.shuffle.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bound on an executor's connections to its peers, against real tcp transports: five peer
 * transports that serve a registered region and answer requests (at once, or when the test lets
 * them), one reading transport, and a bound of two.
 */
class PeerConnectionsTcpTest {
  private static final int PEERS = 5;
  private static final int BOUND = 2;
  private static final int REGION_BYTES = 64 << 10;
  /** Every wait in these tests ends by this; none is expected to take it. */
  private static final long DEADLINE_SECONDS = 60;

  private final List<Transport> peers = new ArrayList<>();
  private final List<RegisteredRegion> regions = new ArrayList<>();
  /** Answers the peers hold back while {@link #holdAnswers} is set; guarded by itself. */
  private final List<Runnable> heldAnswers = new ArrayList<>();
  private boolean holdAnswers; // guarded by heldAnswers
  private Transport reader;

  /** Connections the reader has open, or is opening, now, and the most there ever were. */
  private final AtomicInteger live = new AtomicInteger();
  private final AtomicInteger mostLive = new AtomicInteger();

  private static TransportConfig config() {
    return TransportConfig.of(Map.of("sluice.transport.provider", "tcp", "sluice.transport.secret",
        TransportTestSupport.SECRET, "sluice.transport.bindHost", "127.0.0.1", "sluice.transport.shm.enabled", "false",
        "sluice.transport.ioTimeoutMs", "120000"));
  }

  @BeforeEach
  void startPeers() throws Exception {
    for (int i = 0; i < PEERS; i++) {
      int index = i;
      MessageHandler answer = (node, request) -> {
        ByteBuffer reply = ByteBuffer.allocate(4).putInt(0, index);
        synchronized (heldAnswers) {
          if (!holdAnswers) {
            return CompletableFuture.completedFuture(reply);
          }
          CompletableFuture<ByteBuffer> later = new CompletableFuture<>();
          heldAnswers.add(() -> later.complete(reply));
          return later;
        }
      };
      Transport peer = Transports.open(config(), answer);
      peers.add(peer);
      RegisteredRegion r = peer.allocate(REGION_BYTES);
      ByteBuffer b = r.buffer();
      for (int at = 0; at < REGION_BYTES; at += 4) {
        b.putInt(at, index * 1_000_003 + at);
      }
      regions.add(r);
    }
    reader = Transports.open(config(), MessageHandler.REJECT_ALL);
  }

  /** From now on the peers hold their answers back. */
  private void holdAnswers() {
    synchronized (heldAnswers) {
      holdAnswers = true;
    }
  }

  /** The peers send the answers they held back, and answer at once from now on. */
  private void sendAnswers() {
    List<Runnable> held;
    synchronized (heldAnswers) {
      holdAnswers = false;
      held = new ArrayList<>(heldAnswers);
      heldAnswers.clear();
    }
    held.forEach(Runnable::run);
  }

  @AfterEach
  void stopPeers() {
    sendAnswers();
    if (reader != null) {
      reader.close();
    }
    regions.forEach(RegisteredRegion::close);
    peers.forEach(Transport::close);
  }

  private NodeAddress peer(int i) {
    return peers.get(i).localAddress();
  }

  /** The reader's connections, counted from the connect until they are closed. */
  private PeerConnections connections(long waitDeadlineMs) {
    return new PeerConnections(peer -> {
      mostLive.accumulateAndGet(live.incrementAndGet(), Math::max);
      return reader.connect(peer).handle((c, e) -> {
        if (e != null) {
          live.decrementAndGet();
          throw new CompletionException(e);
        }
        return (Connection) new Counted(c, live);
      });
    }, BOUND, waitDeadlineMs, nanos -> { });
  }

  /** One READ of peer {@code i}'s whole region, checked, through the bound. */
  private CompletableFuture<Void> readAll(PeerConnections c, int i) throws Exception {
    RegisteredRegion destination = reader.allocate(REGION_BYTES);
    RemoteDescriptor remote = regions.get(i).descriptor();
    return c.use(peer(i), conn -> conn.readBatch(List.of(new ReadRequest(remote, 0, destination, 0, REGION_BYTES))).get(0))
        .whenComplete((v, e) -> {
          try {
            if (e == null) {
              ByteBuffer b = destination.buffer();
              for (int at = 0; at < REGION_BYTES; at += 4) {
                assertEquals(i * 1_000_003 + at, b.getInt(at), "byte " + at + " of peer " + i);
              }
            }
          } finally {
            destination.close();
          }
        });
  }

  private static int answerOf(ByteBuffer reply) {
    return reply.getInt(0);
  }

  @Test
  void concurrentReadsFromFivePeersAllCompleteWithNeverMoreThanTwoConnectionsOpen() throws Exception {
    ExecutorService tasks = Executors.newFixedThreadPool(PEERS);
    try (PeerConnections c = connections(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS))) {
      // Five readers, one per peer, each with range requests and READs in flight, as reduce tasks would.
      List<Future<Integer>> done = new ArrayList<>();
      for (int i = 0; i < PEERS; i++) {
        int index = i;
        done.add(tasks.submit(() -> {
          int checked = 0;
          for (int round = 0; round < 20; round++) {
            CompletableFuture<ByteBuffer> answer = c.use(peer(index), conn -> conn.request(ByteBuffer.allocate(8)));
            CompletableFuture<Void> read = readAll(c, index);
            assertEquals(index, answerOf(answer.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
            read.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
            checked++;
          }
          return checked;
        }));
      }
      for (Future<Integer> f : done) {
        assertEquals(20, f.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
      }
      PeerConnections.Stats stats = c.stats();
      assertTrue(mostLive.get() <= BOUND, "at most " + BOUND + " connections open at once, not " + mostLive);
      assertEquals(BOUND, stats.bound());
      assertTrue(stats.peak() <= BOUND, stats.toString());
      assertTrue(stats.open() <= BOUND, stats.toString());
      // Five peers through two places: each peer past the first two took the place of an idle connection.
      assertTrue(stats.evictions() >= PEERS - BOUND, stats.toString());
      assertEquals(0, stats.waitTimeouts(), stats.toString());
    } finally {
      tasks.shutdownNow();
    }
    assertEquals(0, live.get(), "close closed every connection");
  }

  @Test
  void theLeastRecentlyUsedIdleConnectionIsClosedForANewPeerAndReopenedOnItsNextUse() throws Exception {
    try (PeerConnections c = connections(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS))) {
      Function<Connection, CompletableFuture<Connection>> which = CompletableFuture::completedFuture;
      Connection first0 = c.use(peer(0), which).get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      Connection first1 = c.use(peer(1), which).get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertEquals(first0, c.use(peer(0), which).get(DEADLINE_SECONDS, TimeUnit.SECONDS), "peer 0's is shared");
      // Peer 1's connection is now the one used least recently: it makes room for peer 2's.
      readAll(c, 2).get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertFalse(first1.isOpen(), "the least recently used idle connection was closed");
      assertTrue(first0.isOpen());
      assertEquals(new PeerConnections.Stats(BOUND, BOUND, BOUND, 0, 0, 1, 0), c.stats());
      // Peer 1 again: a new connection, in place of peer 0's (now the least recently used).
      readAll(c, 1).get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertFalse(first0.isOpen());
      assertEquals(new PeerConnections.Stats(BOUND, BOUND, BOUND, 0, 0, 2, 0), c.stats());
      assertEquals(BOUND, live.get());
    }
  }

  @Test
  void connectingAheadStartsNoneBeyondTheBound() throws Exception {
    try (PeerConnections c = connections(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS))) {
      List<NodeAddress> all = peers.stream().map(Transport::localAddress).toList();
      assertEquals(BOUND, c.connectAhead(all, 16));
      assertEquals(0, c.connectAhead(all, 16), "no room left, and connecting ahead closes nothing");
      assertEquals(BOUND, c.stats().open());
      // The third peer's use closes one of those opened ahead (idle once connected).
      readAll(c, 2).get(DEADLINE_SECONDS, TimeUnit.SECONDS);
      assertTrue(mostLive.get() <= BOUND, "at most " + BOUND + " at once, not " + mostLive);
      assertEquals(1, c.stats().evictions());
    }
  }

  @Test
  void whenEveryConnectionStaysBusyAWaitEndsAtItsDeadlineAndTheBusyOnesDrainForTheNext() throws Exception {
    try (PeerConnections c = connections(300)) {
      holdAnswers();
      CompletableFuture<ByteBuffer> busy0 = c.use(peer(0), conn -> conn.request(ByteBuffer.allocate(8)));
      CompletableFuture<ByteBuffer> busy1 = c.use(peer(1), conn -> conn.request(ByteBuffer.allocate(8)));
      CompletableFuture<ByteBuffer> third = c.use(peer(2), conn -> conn.request(ByteBuffer.allocate(8)));
      ExecutionException e = assertThrows(ExecutionException.class, () -> third.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
      PeerConnectionsBusyException busy = assertInstanceOf(PeerConnectionsBusyException.class, e.getCause());
      assertTrue(busy.getMessage().contains(peer(2).toString()) && busy.getMessage().contains("maxPeerConnections"),
          busy.getMessage());
      assertFalse(busy0.isDone() || busy1.isDone(), "the uses in flight are not disturbed");
      assertEquals(new PeerConnections.Stats(BOUND, BOUND, BOUND, 1, 1, 0, 0), c.stats());

      // A use that waits longer: one of the busy connections stops taking new uses, and once its
      // answer comes it is closed for this peer.
      try (PeerConnections patient = connections(TimeUnit.SECONDS.toMillis(DEADLINE_SECONDS))) {
        // (a second bound, sharing the peers; it is alone within its own bound)
        CompletableFuture<ByteBuffer> p0 = patient.use(peer(0), conn -> conn.request(ByteBuffer.allocate(8)));
        CompletableFuture<ByteBuffer> p1 = patient.use(peer(1), conn -> conn.request(ByteBuffer.allocate(8)));
        CompletableFuture<ByteBuffer> p3 = patient.use(peer(3), conn -> conn.request(ByteBuffer.allocate(8)));
        // Peer 0's connection drains for peer 3: a new use of it waits in line too.
        CompletableFuture<ByteBuffer> again0 = patient.use(peer(0), conn -> conn.request(ByteBuffer.allocate(8)));
        assertEquals(2, patient.stats().waits(), patient.stats().toString());
        sendAnswers();
        assertEquals(0, answerOf(p0.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
        assertEquals(1, answerOf(p1.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
        assertEquals(3, answerOf(p3.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
        assertEquals(0, answerOf(again0.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
        assertEquals(0, patient.stats().waitTimeouts());
        assertTrue(patient.stats().peak() <= BOUND);
      }
      assertEquals(0, answerOf(busy0.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
      assertEquals(1, answerOf(busy1.get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
      // Room again: peer 2 gets its connection now, in place of an idle one.
      assertEquals(2, answerOf(c.use(peer(2), conn -> conn.request(ByteBuffer.allocate(8)))
          .get(DEADLINE_SECONDS, TimeUnit.SECONDS)));
      assertEquals(1, c.stats().evictions());
    }
  }

  /** A real connection, counted among the live ones until it is closed. */
  private static final class Counted implements Connection {
    private final Connection c;
    private final AtomicInteger live;
    private final AtomicBoolean open = new AtomicBoolean(true);

    Counted(Connection c, AtomicInteger live) {
      this.c = c;
      this.live = live;
    }

    @Override
    public NodeAddress peer() {
      return c.peer();
    }

    @Override
    public long peerNode() {
      return c.peerNode();
    }

    @Override
    public byte[] peerIdentityKey() {
      return c.peerIdentityKey();
    }

    @Override
    public String dataPath() {
      return c.dataPath();
    }

    @Override
    public boolean isOpen() {
      return c.isOpen();
    }

    @Override
    public List<CompletableFuture<Void>> readBatch(List<ReadRequest> requests) {
      return c.readBatch(requests);
    }

    @Override
    public CompletableFuture<ByteBuffer> request(ByteBuffer message) {
      return c.request(message);
    }

    @Override
    public void close() {
      if (open.compareAndSet(true, false)) {
        live.decrementAndGet();
      }
      c.close();
    }
  }
}
