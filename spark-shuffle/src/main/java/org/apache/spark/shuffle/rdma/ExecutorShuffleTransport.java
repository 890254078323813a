package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.TransportReport;
import io.sluice.spark.shuffle.fetch.PeerConnections;
import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.spark.shuffle.registry.AddressBookClient;
import io.sluice.spark.shuffle.registry.MapOutputRegistry;
import io.sluice.spark.shuffle.registry.RangeService;
import io.sluice.spark.shuffle.startup.StartupTimes;
import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteView;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegionSizes;
import io.sluice.transport.memory.RegisteredAllocator;
import io.sluice.transport.metrics.TransportMetrics;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This executor's shuffle transport: the endpoint, the registry of its map outputs that peers
 * READ, its entry in the driver's address book, and its connections to peer executors (at most
 * one per peer and {@code maxPeerConnections} in all; see {@link PeerConnections}), opened on
 * first use and reopened after a failure or once closed for room.
 *
 * <p>Thread safe. Owns the transport, the registry and the connections; {@link #close} releases
 * them all.
 */
final class ExecutorShuffleTransport implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorShuffleTransport.class);
  /**
   * READ destinations come in power-of-two sizes from 64 KiB to 1 GiB (above that, the exact
   * length, never kept): registering fresh memory for every range costs more than the READ
   * itself on a fast path, so a region a reduce task gives back serves the next range of its size.
   */
  static final RegionSizes DESTINATION_SIZES = RegionSizes.powersOfTwo(64 << 10, 1 << 30);
  /** Connections one reduce task starts ahead of its fallback decision, at most. */
  static final int MAX_CONNECTS_AHEAD = 16;

  private final String executorId;
  private final Transport transport;
  private final MapOutputRegistry registry;
  private final AddressBookClient addressBook;
  private final long waitDeadlineMs;
  private final RegisteredAllocator destinations;
  private final PeerConnections connections;
  /** Reduce tasks reading from peers now, among which the bound on connections is shared. */
  private final AtomicInteger readers = new AtomicInteger();
  private final Map<String, LongAdder> bytesReadByPath = new ConcurrentHashMap<>();
  private final LongAdder bytesViewed = new LongAdder();
  private final LongAdder blocksInRuns = new LongAdder();
  private final AtomicLong viewsHeld = new AtomicLong();
  private final StartupTimes startup;
  private final CompletableFuture<Void> registered;
  private final long registrationWaitMs;
  private final AtomicBoolean registrationFailureLogged =
      new AtomicBoolean();

  /** The JVM's connection rehearsal, if this open is the one to run it ({@link #rehearseConnection}). */
  private final Runnable rehearsal;

  private ExecutorShuffleTransport(String executorId, Transport transport, MapOutputRegistry registry,
      AddressBookClient addressBook, long waitDeadlineMs, long pooledDestinationBytes, StartupTimes startup,
      CompletableFuture<Void> registered, long registrationWaitMs, int maxPeerConnections, long peerWaitMs,
      Runnable rehearsal) {
    this.executorId = executorId;
    this.rehearsal = rehearsal;
    this.registered = registered;
    this.registrationWaitMs = registrationWaitMs;
    this.transport = transport;
    this.startup = startup;
    this.connections = new PeerConnections(transport::connect, maxPeerConnections, peerWaitMs, startup::firstConnect);
    this.destinations = destinations(transport, "shuffle READ destinations of executor " + executorId,
        pooledDestinationBytes);
    this.registry = registry;
    this.addressBook = addressBook;
    this.waitDeadlineMs = waitDeadlineMs;
  }

  /**
   * Opens the transport, starts serving range requests and sends its registration to the driver,
   * without waiting for the answer: a map task that finds the transport open waits for it only
   * before its output is published ({@link #awaitRegistered}), long after it came; one that ended
   * during the open relies on the driver's book holding lookups until it comes.
   *
   * @param pooledDestinationBytes how many bytes of idle READ destinations to keep for reuse
   * @param registrationWindowBytes largest registration of a map output's data file (larger files take several)
   * @param startup where the open's steps and, later, the first connections' latencies are recorded
   * @param registrationWaitMs how long {@link #awaitRegistered} waits for the driver's answer
   * @param maxPeerConnections connections to peers open at once, at most; a read that finds none free
   *     waits for one at most the transport's I/O timeout
   *
   * @throws TransportException if the transport cannot start here
   */
  static ExecutorShuffleTransport open(String executorId, TransportConfig config,
      IndexShuffleBlockResolver resolver, AddressBookClient addressBook, long pooledDestinationBytes,
      long registrationWindowBytes, StartupTimes startup, long registrationWaitMs, int maxPeerConnections)
      throws TransportException {
    long started = System.nanoTime();
    RangeService service = new RangeService(config.value(TransportKeys.MAX_MESSAGE_BYTES));
    // The JVM's connection rehearsal waits until the address is on its way to the driver: the first
    // map task waits for the open, not for it.
    Transports.Opened open = Transports.openLeavingRehearsal(config, service);
    Transport transport = open.transport();
    long opened = startup.lap("transport", started);
    try {
      MapOutputRegistry registry =
          new MapOutputRegistry(transport, new SparkShuffleFiles(resolver), registrationWindowBytes);
      service.serve(registry);
      CompletableFuture<Void> registered = addressBook.registerAsync(
          new AddressBookMessage.Entry(executorId, transport.localAddress(), transport.provider()));
      startup.lap("register", opened);
      // A use of a connection may wait for room (at most the I/O timeout), then connect, then wait for its answer.
      long ioTimeoutMs = config.value(TransportKeys.IO_TIMEOUT_MS);
      long deadline = config.value(TransportKeys.CONNECT_TIMEOUT_MS) + 2 * ioTimeoutMs + 5_000;
      LOG.info("Executor {} serves shuffle output through {} at {}; same-host peers' shuffle files below {} are"
          + " mapped", executorId, transport.provider(), transport.localAddress(),
          config.value(TransportKeys.SHM_TRUSTED_FILE_ROOTS));
      return new ExecutorShuffleTransport(executorId, transport, registry, addressBook, deadline,
          pooledDestinationBytes, startup, registered, registrationWaitMs, maxPeerConnections, ioTimeoutMs,
          open.rehearsal());
    } catch (RuntimeException e) {
      transport.close();
      throw new TransportException("could not register the shuffle transport with the driver: " + e, e);
    }
  }

  String executorId() {
    return executorId;
  }

  /**
   * Waits until the driver has this executor's registration, at most the lookup timeout: a map
   * task that found the transport open calls it before its output is published, so that reducers
   * do not learn of the output before they can learn this executor's address. A registration that failed or did not come in
   * time is logged once; reducers then read this executor's blocks through Spark's shuffle
   * (the fallback policy's {@code peerWithoutTransport}).
   */
  void awaitRegistered() {
    if (registered.isDone() && !registered.isCompletedExceptionally()) {
      return;
    }
    try {
      registered.get(registrationWaitMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      if (registrationFailureLogged.compareAndSet(false, true)) {
        LOG.warn("Executor {}: the driver has no registration of its shuffle transport ({}); reducers read its"
            + " blocks through Spark's shuffle", executorId, e instanceof ExecutionException
            ? e.getCause() : "no answer within " + registrationWaitMs + " ms");
      }
    }
  }

  /**
   * Registers a committed map output for remote READs (quietly: one that cannot be registered now
   * is on request) and waits until the driver has this executor's address ({@link #awaitRegistered}).
   */
  void registerAndAwaitDriver(int shuffleId, long mapId) {
    registry.registerQuietly(shuffleId, mapId);
    awaitRegistered();
  }

  /** Completes once the driver has this executor's registration; fails if it refused it or did not answer. */
  CompletableFuture<Void> registration() {
    return registered;
  }

  Transport transport() {
    return transport;
  }

  /**
   * Runs the JVM's connection rehearsal ({@link Transports#openLeavingRehearsal}) if this open is
   * the one to, and records it as the open's step {@code rehearsal}; at most once, never throws.
   * The manager calls it on the open's thread once the transport is published.
   */
  void rehearseConnection() {
    long started = System.nanoTime();
    rehearsal.run();
    startup.lap("rehearsal", started);
  }

  MapOutputRegistry registry() {
    return registry;
  }

  /**
   * READ destinations shared by this executor's reduce tasks, with at most {@code maxIdleBytes}
   * of them kept idle for reuse. A task gives a destination back with {@link
   * RegisteredAllocator#release} once its bytes are consumed, and frees it with {@link
   * RegisteredAllocator#free} when its READ failed (a late write may still be pending for it).
   */
  static RegisteredAllocator destinations(Transport transport, String name, long maxIdleBytes) {
    return RegisteredAllocator.root(name, transport, AllocatorOptions.DEFAULTS.withReuse(DESTINATION_SIZES, maxIdleBytes));
  }

  /** READ destinations shared by this executor's reduce tasks. */
  RegisteredAllocator destinations() {
    return destinations;
  }

  /** How long a reducer waits for any one transport future before calling it a failure. */
  long waitDeadlineMs() {
    return waitDeadlineMs;
  }

  /** The transport address of a peer executor, or empty if it has no transport. */
  Optional<NodeAddress> addressOf(String peerExecutorId) {
    return addressBook.lookup(peerExecutorId).map(AddressBookMessage.Entry::address);
  }

  /** Those of the given peers that the driver no longer counts as active. */
  Set<String> goneAmong(Collection<String> peerExecutorIds) {
    return addressBook.goneAmong(peerExecutorIds);
  }

  /**
   * Runs one transport operation on the connection to a peer, shared by every task of this executor,
   * holding it in use until the operation's future completes; see {@link PeerConnections#use}.
   */
  <T> CompletableFuture<T> use(NodeAddress peer, Function<Connection, CompletableFuture<T>> operation) {
    return connections.use(peer, operation);
  }

  /**
   * Starts connecting to those of the peers a reduce task will read whose address this executor
   * already knows (no request to the driver), at most {@link #MAX_CONNECTS_AHEAD} a call; see
   * {@link PeerConnections#connectAhead}, which starts none past the bound. Connections that are not
   * used stay shared, one per peer, until the transport closes or one is closed to make room.
   */
  void connectAhead(Collection<String> peerExecutorIds) {
    List<NodeAddress> known = new ArrayList<>();
    for (String id : peerExecutorIds) {
      addressBook.known(id).ifPresent(e -> known.add(e.address()));
    }
    connections.connectAhead(known, MAX_CONNECTS_AHEAD);
  }

  /**
   * A reduce task starts reading from peers: how many of them it may have asked for ranges and
   * not finished reading at once, its share of the bound on connections among the tasks reading
   * now (at least one), so that the connections its range requests open are still there for its
   * READs. It calls {@link #stopReading} once when done.
   */
  int startReading() {
    return Math.max(1, connections.stats().bound() / readers.incrementAndGet());
  }

  void stopReading() {
    readers.decrementAndGet();
  }

  /** The bound on connections to peers, {@code maxPeerConnections}. */
  int peerConnectionBound() {
    return connections.stats().bound();
  }

  /**
   * Which of a reduce task's peers it READs (see {@link PeerConnections#choose}: as many as the
   * bound has room for beside the peers other tasks are reading, those this executor has a
   * connection to first); it reads the others through Spark's reader. Every peer must have a known
   * transport address.
   *
   * @param peerExecutorIds the peers, in the order the task prefers them
   */
  Set<String> chooseReadPeers(List<String> peerExecutorIds) {
    Map<NodeAddress, String> ids = new LinkedHashMap<>();
    for (String id : peerExecutorIds) {
      ids.put(addressOf(id).orElseThrow(() -> new IllegalStateException("executor " + id + " has no transport")), id);
    }
    Set<String> chosen = new LinkedHashSet<>();
    connections.choose(new ArrayList<>(ids.keySet())).forEach(a -> chosen.add(ids.get(a)));
    return chosen;
  }

  /** See {@link PeerConnections#expect}. */
  PeerConnections.Expectation expect(NodeAddress peer) {
    return connections.expect(peer);
  }

  /** Whether this executor has a connection to the peer open or being opened. */
  boolean connected(NodeAddress peer) {
    return connections.connected(peer);
  }

  /** Forgets a connection that failed, so the next task reconnects. */
  void discard(NodeAddress peer, Connection failed) {
    connections.discard(peer, failed);
  }

  /** Counts bytes this executor's reducers READ over a data path ("tcp", "shm" or "verbs"). */
  void recordRead(String dataPath, long bytes) {
    bytesReadByPath.computeIfAbsent(dataPath, p -> new LongAdder()).add(bytes);
  }

  /** Counts {@code blocks} read as part of a run of one map output's blocks through one stream. */
  void recordBlocksInRun(int blocks) {
    blocksInRuns.add(blocks);
  }

  /**
   * Counts bytes this executor's reducers took as views of a same-host peer's file instead of
   * READing them: they count as read over {@code dataPath} too.
   */
  void recordViewed(String dataPath, long bytes) {
    recordRead(dataPath, bytes);
    bytesViewed.add(bytes);
  }

  /**
   * The view, counted among the views this executor's reducers hold until it is closed (once,
   * however often {@code close} is called).
   */
  RemoteView held(RemoteView view) {
    viewsHeld.incrementAndGet();
    AtomicBoolean open = new AtomicBoolean(true);
    return new RemoteView() {
      @Override
      public ByteBuffer buffer() {
        return view.buffer();
      }

      @Override
      public long length() {
        return view.length();
      }

      @Override
      public void read(long offset, ByteBuffer dst) throws TransportException {
        view.read(offset, dst);
      }

      @Override
      public void close() {
        if (open.compareAndSet(true, false)) {
          view.close();
          viewsHeld.decrementAndGet();
        }
      }
    };
  }

  /** The bound on connections to peers and what it did. */
  PeerConnections.Stats peerConnections() {
    return connections.stats();
  }

  /** The transport's counters. */
  TransportMetrics metrics() {
    return transport.metrics();
  }

  /** What this executor's transport did so far, for reports. */
  TransportReport report() {
    Map<String, Long> read = new TreeMap<>();
    bytesReadByPath.forEach((path, n) -> read.put(path, n.sum()));
    PeerConnections.Stats peers = connections.stats();
    return new TransportReport(executorId, transport.provider(), transport.localAddress().toString(), read,
        bytesViewed.sum(), viewsHeld.get(), destinations.peakBytes(), registry.registeredCount(),
        startup.openNanos(), startup.openWaitNanos(), startup.steps(), startup.firstConnects(), startup.firstConnectMedianNanos(),
        startup.firstConnectMaxNanos(), peers.bound(), peers.open(), peers.peak(), peers.waits(), peers.waitTimeouts(),
        peers.evictions(), peers.passedOn(), blocksInRuns.sum(), startup.registeredAfterOpen());
  }

  @Override
  public void close() {
    connections.close();
    destinations.shutdown(); // a destination still being read is freed when its task lets go
    registry.close();
    transport.close();
  }
}
