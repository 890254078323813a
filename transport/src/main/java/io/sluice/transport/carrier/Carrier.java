package io.sluice.transport.carrier;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.Curves;
import io.sluice.transport.crypto.EngineChoice;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.metrics.TransportMetrics;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The carrier every provider runs on: it listens, authenticates every peer ({@link Handshake}),
 * protects every frame after that ({@code RecordLayer}), carries requests to the message
 * handler, control requests to the {@link ControlService}s registered with it, and READ frames
 * to its {@link ReadService}, whose bytes it writes straight from registered memory.
 *
 * <p>Threads: one acceptor; {@code ioThreads} selector loops that serve every connection,
 * accepted (handshake, READs, requests) or made (answers), however many; a pool for message
 * handlers; {@link #CONNECT_THREADS} threads that run outgoing connects and handshakes (idle ones
 * end after a minute); {@link #PROOF_THREADS} threads that do the public-key work of
 * incoming handshakes (idle ones end after a minute); {@link #SETUP_THREADS}
 * threads for the requests of control services that may block (idem); one timer that enforces
 * every deadline. Accepted connections that have not authenticated are bounded by {@link
 * Admission}.
 *
 * <p>Owned by one transport, which closes it. Thread safe.
 */
public final class Carrier implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Carrier.class);
  /** The first wait before connecting again after a refusal or reset; it doubles up to {@link #MAX_RETRY_WAIT_MS}. */
  static final long FIRST_RETRY_WAIT_MS = 20;
  static final long MAX_RETRY_WAIT_MS = 1000;
  /** Bounds of the timer's sweep of every session and connection ({@link #sweepIntervalNanos}). */
  static final long MIN_SWEEP_MS = 50;
  static final long MAX_SWEEP_MS = 1000;
  /**
   * Threads that do the public-key work of incoming handshakes: this side's ephemeral X25519 key
   * and agreement for each HELLO, and, once the client proved the secret, the check of its
   * signature and this side's: kept off the selector threads, on a fixed number of threads
   * however many peers connect at once.
   */
  public static final int PROOF_THREADS = 2;
  /**
   * Threads that serve the requests of control services that {@link ControlService#mayBlock}
   * (verbs set-up registers memory with the device): off the selector threads, and apart from
   * the message handlers, which an application may keep busy for as long as it likes.
   */
  public static final int SETUP_THREADS = 2;
  /**
   * Threads that run outgoing connects, handshakes and upgrades, however many peers this side
   * connects to at once: further connects queue, and their deadline counts from the call, queue
   * included, so a connect that waited too long for a thread fails as one that took too long.
   * The threads of an executor that reads from hundreds of peers stay flat.
   */
  public static final int CONNECT_THREADS = 8;

  /**
   * What a transport makes of a new authenticated connection before it is handed out (it asks
   * for a data path, say); runs on the connecting thread, within the connect deadline.
   */
  @FunctionalInterface
  public interface Upgrade<T> {
    T apply(CarrierConnection connection) throws IOException;
  }

  private final Settings settings;
  private final NodeIdentity identity;
  /** The key behind each peer node id in use: a connection holds its peer's id while it is open. */
  private final PeerIdentities peers;
  private final PeerIdentities.Hold selfHold;
  private final MessageHandler handler;
  private final ControlServices services;
  private final Optional<ReadService> reads;
  private final TransportMetrics metrics;
  private final Handshake handshake;
  /** What seals and opens the records of this carrier's encrypted connections, chosen once at open. */
  private final EngineChoice engine;
  private final ServerSocketChannel listener;
  private final NodeAddress localAddress;
  private final Set<ServerSession> sessions = ConcurrentHashMap.newKeySet();
  /** The request memory all sessions share ({@code maxQueuedRequestBytes}), handed out in turn. */
  private final SharedRequestMemory<ServerSession> requestMemory;
  /** Sessions admitted by {@link #admitAuthenticated} and not yet closed. */
  private final java.util.concurrent.atomic.AtomicInteger authenticatedCount =
      new java.util.concurrent.atomic.AtomicInteger();
  private final Admission<ServerSession> admission;
  /** One line a few seconds for connections refused at the bound, and for those dropped to make room. */
  private final LogLimiter refusedLog = new LogLimiter(10, TimeUnit.SECONDS);
  private final LogLimiter droppedLog = new LogLimiter(10, TimeUnit.SECONDS);
  private final LogLimiter sessionEndLog = new LogLimiter(1, TimeUnit.SECONDS);
  private final IoLoop[] loops;
  private final Thread acceptor;
  private final AtomicInteger loopTurn = new AtomicInteger();
  private final Set<CarrierConnection> connections = ConcurrentHashMap.newKeySet();
  private final ExecutorService handlerPool;
  private final ExecutorService connectPool;
  private final ExecutorService proofPool;
  private final ExecutorService setupPool;
  private final ScheduledExecutorService timer;
  private volatile boolean closing;
  private final Object closeLock = new Object();

  /**
   * Opens a carrier and starts listening.
   *
   * @param identity the key pair and node id of the transport that owns it, which the handshake
   *     proves to every peer
   * @param services the control services it serves
   * @param reads what READ frames are served from; empty to answer every READ frame with an
   *     unknown key (a provider that moves READs on its own data path)
   * @throws TransportUnavailableException if it cannot listen or open a selector
   */
  public Carrier(Settings settings, NodeIdentity identity, MessageHandler handler, ControlServices services,
      Optional<ReadService> reads) throws TransportException {
    this(settings, identity, new PeerIdentities(), handler, services, reads, new TransportMetrics());
  }

  /**
   * As above, counting into {@code metrics} and binding peers' node ids to their keys in {@code
   * peers}: the owning transport's, which its regions' readers and grants hold too.
   */
  public Carrier(Settings settings, NodeIdentity identity, PeerIdentities peers, MessageHandler handler,
      ControlServices services, Optional<ReadService> reads, TransportMetrics metrics) throws TransportException {
    this(settings, identity, peers, handler, services, reads, metrics, SelectorProvider.provider());
  }

  /** As the public constructor, with the selector loops' selectors opened by {@code selectors}. */
  Carrier(Settings settings, NodeIdentity identity, MessageHandler handler, ControlServices services,
      Optional<ReadService> reads, SelectorProvider selectors) throws TransportException {
    this(settings, identity, new PeerIdentities(), handler, services, reads, new TransportMetrics(), selectors);
  }

  private Carrier(Settings settings, NodeIdentity identity, PeerIdentities peers, MessageHandler handler,
      ControlServices services, Optional<ReadService> reads, TransportMetrics metrics, SelectorProvider selectors)
      throws TransportException {
    this.settings = settings;
    this.requestMemory = new SharedRequestMemory<>(settings.maxQueuedRequestBytes(), s -> s.socket().resumeReading());
    this.metrics = metrics;
    this.identity = identity;
    this.peers = peers;
    // This side's own id names this side's key for as long as the carrier lives.
    this.selfHold = peers.prove(identity.nodeId(), identity.publicKey());
    this.handler = handler;
    this.services = services;
    this.reads = reads;
    this.handshake = new Handshake(settings.secret());
    try {
      this.engine = EngineChoice.choose(settings.encryptionEngine());
    } catch (IllegalStateException e) {
      throw new TransportUnavailableException(e.getMessage(), e);
    }
    metrics.encryptionEngine(engine.engine().id());
    LOG.debug("AES-GCM engine {}: {}; X25519 and Ed25519 by {}", engine.engine().id(), engine.reason(),
        Curves.description());
    try {
      listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(settings.bindHost(), settings.port()), 256);
    } catch (IOException e) {
      throw new TransportUnavailableException("cannot listen on " + settings.bindHost() + ":" + settings.port()
          + ": " + e.getMessage(), e);
    }
    int port = listener.socket().getLocalPort();
    this.localAddress = new NodeAddress(advertisedHost(settings), port);
    // HexFormat, not String.format: a transport's open is often the JVM's first use of a
    // Formatter, whose locale set-up costs a cold JVM more than the rest of this constructor.
    String tag = HexFormat.of().toHexDigits((short) identity.nodeId());
    this.handlerPool = Executors.newFixedThreadPool(settings.handlerThreads(), daemon("sluice-handler-" + tag));
    this.connectPool = growingPool(CONNECT_THREADS, "sluice-connect-" + tag);
    this.proofPool = idlingPool(PROOF_THREADS, "sluice-proof-" + tag);
    this.setupPool = idlingPool(SETUP_THREADS, "sluice-setup-" + tag);
    ScheduledThreadPoolExecutor deadlines = new ScheduledThreadPoolExecutor(1, daemon("sluice-timer-" + tag));
    deadlines.setRemoveOnCancelPolicy(true); // a session's handshake check leaves the queue when it authenticates
    this.timer = deadlines;
    this.admission = new Admission<>(settings.maxUnauthenticated(), settings.maxUnauthenticatedPerAddress());
    this.loops = new IoLoop[settings.ioThreads()];
    try {
      for (int i = 0; i < loops.length; i++) {
        loops[i] = new IoLoop("sluice-io-" + tag + "-" + (i + 1), selectors.openSelector());
      }
    } catch (IOException e) {
      for (IoLoop l : loops) {
        if (l != null) {
          l.close();
        }
      }
      closeQuietly(listener);
      handlerPool.shutdownNow();
      connectPool.shutdownNow();
      proofPool.shutdownNow();
      setupPool.shutdownNow();
      timer.shutdownNow();
      throw new TransportUnavailableException("cannot open a selector: " + e.getMessage(), e);
    }
    long sweep = sweepIntervalNanos(settings);
    timer.scheduleWithFixedDelay(this::checkDeadlines, sweep, sweep, TimeUnit.NANOSECONDS);
    acceptor = daemon("sluice-acceptor-" + tag).newThread(this::acceptLoop);
    acceptor.start();
  }

  /**
   * How often the timer looks at every session and connection for requests, READs and socket
   * I/O past the I/O timeout (and releases what peers' shm paths revoked): a twentieth of that
   * timeout, between {@link #MIN_SWEEP_MS} and {@link #MAX_SWEEP_MS}, so such a deadline is
   * enforced at most a twentieth of the timeout late (50 ms where the timeout is under a second),
   * while an idle transport wakes about once a second. Handshake deadlines,
   * shorter, are each checked when due ({@link #sessionAccepted}).
   */
  static long sweepIntervalNanos(Settings s) {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(MIN_SWEEP_MS),
        Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_SWEEP_MS), s.ioTimeoutNanos() / 20));
  }

  private static String advertisedHost(Settings s) {
    if (!s.advertiseHost().isEmpty()) {
      return s.advertiseHost();
    }
    if (!s.bindHost().equals("0.0.0.0") && !s.bindHost().equals("::")) {
      return s.bindHost();
    }
    try {
      return InetAddress.getLocalHost().getHostAddress();
    } catch (IOException e) {
      return InetAddress.getLoopbackAddress().getHostAddress();
    }
  }

  /** At most {@code threads} threads, started when work comes; idle ones end after a minute. */
  private static ExecutorService idlingPool(int threads, String prefix) {
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 1, TimeUnit.MINUTES,
        new LinkedBlockingQueue<>(), daemon(prefix));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * At most {@code threads} threads, a new one only when no idle one can take the work (as a
   * cached pool, which reuses an idle thread first); past the bound, work queues. Idle threads
   * end after a minute.
   */
  private static ExecutorService growingPool(int threads, String prefix) {
    // offer() hands work only to an idle thread, so the pool grows instead of queueing; once it
    // has all its threads, the executor refuses the work and the handler queues it.
    LinkedTransferQueue<Runnable> queue = new LinkedTransferQueue<>() {
      private static final long serialVersionUID = 1L;

      @Override
      public boolean offer(Runnable work) {
        return tryTransfer(work);
      }
    };
    return new ThreadPoolExecutor(0, threads, 1, TimeUnit.MINUTES, queue, daemon(prefix), (work, pool) -> {
      if (pool.isShutdown()) {
        throw new RejectedExecutionException("pool is shut down");
      }
      queue.add(work);
    });
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  public Settings settings() {
    return settings;
  }

  /** The AES-GCM engine of this carrier's encrypted connections. */
  public AesGcmEngine engine() {
    return engine.engine();
  }

  /** The engine with the reason it was chosen. */
  public EngineChoice engineChoice() {
    return engine;
  }

  public long nodeId() {
    return identity.nodeId();
  }

  NodeIdentity identity() {
    return identity;
  }

  PeerIdentities peers() {
    return peers;
  }

  /** The address peers connect to. */
  public NodeAddress localAddress() {
    return localAddress;
  }

  /** What this carrier counts into. */
  public TransportMetrics metrics() {
    return metrics;
  }

  Handshake handshake() {
    return handshake;
  }

  ControlServices services() {
    return services;
  }

  Optional<ReadService> reads() {
    return reads;
  }

  boolean isClosing() {
    return closing;
  }

  /**
   * Runs {@code work} (an incoming handshake's X25519 agreement, signature check and signing, too
   * slow for a selector thread) on the proof threads; runs {@code closed} instead if the carrier is closing.
   */
  void runProofWork(Runnable work, Runnable closed) {
    try {
      proofPool.execute(work);
    } catch (RejectedExecutionException e) {
      closed.run();
    }
  }

  /** Connects to {@code peer} and authenticates; completes within the connect deadline. */
  public CompletableFuture<CarrierConnection> connect(NodeAddress peer) {
    return connect(peer, c -> c);
  }

  /**
   * Connects to {@code peer}, authenticates and applies {@code upgrade}, all within the connect
   * deadline; a connection that misses it, or whose upgrade fails, is closed.
   */
  public <T> CompletableFuture<T> connect(NodeAddress peer, Upgrade<T> upgrade) {
    if (closing) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closed"));
    }
    Optional<TransportUnavailableException> dead = deadLoop();
    if (dead.isPresent()) {
      return CompletableFuture.failedFuture(new TransportUnavailableException(
          "transport takes no new connections: " + dead.get().getMessage(), dead.get()));
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    long deadline = System.nanoTime() + settings.connectTimeoutNanos();
    try {
      connectPool.execute(() -> {
        try {
          result.complete(connectWithRetries(peer, upgrade, deadline));
        } catch (TransportException e) {
          result.completeExceptionally(e);
        } catch (IOException | RuntimeException e) {
          result.completeExceptionally(new PeerClosedException("cannot connect to " + peer + ": " + e, e));
        }
      });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new PeerClosedException("transport is closed"));
    }
    return result;
  }

  /**
   * Connects, trying again while the peer closes or resets the connection before the handshake
   * ends (a server shedding unauthenticated connections under a flood, or refusing for now),
   * after a wait that doubles from {@link #FIRST_RETRY_WAIT_MS} to {@link #MAX_RETRY_WAIT_MS}, as
   * long as the connect deadline leaves time. A refused connect (nothing listens), a failed
   * authentication, a protocol violation and the deadline end it at once.
   */
  private <T> T connectWithRetries(NodeAddress peer, Upgrade<T> upgrade, long deadline) throws IOException {
    try {
      T connected = retryConnect(peer, upgrade, deadline);
      metrics.connectionOpened();
      return connected;
    } catch (IOException | RuntimeException e) {
      metrics.connectFailed(TransportMetrics.Reason.of(e, closing), !(e instanceof java.net.ConnectException));
      throw e;
    }
  }

  private <T> T retryConnect(NodeAddress peer, Upgrade<T> upgrade, long deadline) throws IOException {
    if (deadline - System.nanoTime() <= 0) {
      throw new TransportTimeoutException("connecting to " + peer + " took longer than "
          + TimeUnit.NANOSECONDS.toMillis(settings.connectTimeoutNanos()) + " ms (it waited for one of "
          + CONNECT_THREADS + " connect threads that long)");
    }
    long waitMs = FIRST_RETRY_WAIT_MS;
    for (int attempt = 1; ; attempt++) {
      try {
        return doConnect(peer, upgrade, deadline);
      } catch (RefusedBeforeHandshake e) {
        long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (closing || leftMs <= waitMs) {
          throw e.failure;
        }
        LOG.debug("Connecting to {} failed (attempt {}), trying again in {} ms: {}", peer, attempt, waitMs,
            e.failure.getMessage());
        try {
          Thread.sleep(waitMs);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new PeerClosedException("transport closed while connecting to " + peer);
        }
        waitMs = Math.min(2 * waitMs, MAX_RETRY_WAIT_MS);
      }
    }
  }

  /** The peer refused or reset the connection before the handshake ended: worth another try. */
  private static final class RefusedBeforeHandshake extends IOException {
    private static final long serialVersionUID = 1L;
    final IOException failure;

    RefusedBeforeHandshake(IOException failure) {
      super(failure.getMessage(), failure);
      this.failure = failure;
    }
  }

  private <T> T doConnect(NodeAddress peer, Upgrade<T> upgrade, long deadlineNanos) throws IOException {
    long leftNanos = Math.max(1, deadlineNanos - System.nanoTime());
    long timeoutMs = TimeUnit.NANOSECONDS.toMillis(settings.connectTimeoutNanos());
    SocketChannel socket = SocketChannel.open();
    FrameChannel channel = new FrameChannel(socket, settings.ioTimeoutNanos());
    AtomicBoolean timedOut = new AtomicBoolean();
    ScheduledFuture<?> deadline = timer.schedule(() -> {
      timedOut.set(true);
      channel.close();
    }, leftNanos, TimeUnit.NANOSECONDS);
    try {
      Handshake.Client proven;
      try {
        try {
          socket.socket().connect(new InetSocketAddress(peer.host(), peer.port()),
              (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos)));
        } catch (SocketTimeoutException e) {
          throw new TransportTimeoutException("connecting to " + peer + " took longer than " + timeoutMs + " ms", e);
        }
        socket.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        proven = ClientHandshake.authenticate(channel, handshake, identity,
            settings.encryption() ? Handshake.FLAG_ENCRYPT : 0, engine.engine());
      } catch (java.net.ConnectException e) {
        throw e; // nothing listens there: no use trying again
      } catch (java.net.SocketException | PeerClosedException | TransportUnavailableException e) {
        if (timedOut.get()) {
          throw e;
        }
        deadline.cancel(false);
        channel.close();
        throw new RefusedBeforeHandshake(e instanceof TransportException ? e
            : new PeerClosedException("cannot connect to " + peer + ": " + e, e));
      }
      // Refused here, once the server proved its key, if its node id is held for another key.
      PeerIdentities.Hold hold = peers.prove(proven.serverNode(), proven.serverIdentityKey());
      CarrierConnection conn;
      try {
        conn = new CarrierConnection(this, socket, channel.sealer(), channel.opener(), nextLoop(), peer,
            proven.serverNode(), proven.serverIdentityKey(), hold);
      } catch (IOException | RuntimeException e) {
        hold.close();
        throw e;
      }
      connections.add(conn);
      conn.start();
      T upgraded;
      try {
        upgraded = upgrade.apply(conn);
      } catch (IOException | RuntimeException e) {
        conn.close();
        throw e;
      }
      if (!deadline.cancel(false)) {
        conn.close();
        throw new TransportTimeoutException("connecting to " + peer + " took longer than " + timeoutMs + " ms");
      }
      return upgraded;
    } catch (RefusedBeforeHandshake e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      deadline.cancel(false);
      channel.close();
      if (timedOut.get() && !(e instanceof TransportTimeoutException)) {
        throw new TransportTimeoutException(
            "connecting to " + peer + " and authenticating took longer than " + timeoutMs + " ms", e);
      }
      throw e;
    }
  }

  private void acceptLoop() {
    while (!closing) {
      SocketChannel s;
      try {
        s = listener.accept();
      } catch (IOException e) {
        if (!closing) {
          LOG.warn("Listener on {} failed: {}", localAddress, e.getMessage());
        }
        return;
      }
      InetSocketAddress remote;
      try {
        remote = (InetSocketAddress) s.getRemoteAddress();
        s.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
        s.configureBlocking(false);
      } catch (IOException e) {
        closeQuietly(s);
        continue;
      }
      // Authenticated connections are bounded when they authenticate (admitAuthenticated), those
      // waiting to by Admission; this only caps the sockets of both together.
      if (sessions.size() >= (long) settings.maxConnections() + settings.maxUnauthenticated()) {
        refusedLog.log(left -> LOG.warn("Refusing connection from {}: {} connections open ({} + {}){}", remote,
            sessions.size(), TransportOption.MAX_CONNECTIONS.key(), TransportOption.MAX_UNAUTHENTICATED.key(),
            leftOut(left)));
        metrics.connectionRefused(TransportMetrics.Refusal.MAX_CONNECTIONS);
        closeQuietly(s);
        continue;
      }
      Optional<TransportUnavailableException> dead = deadLoop();
      if (dead.isPresent()) {
        metrics.connectionRefused(TransportMetrics.Refusal.TRANSPORT_FAILED);
        LOG.debug("Refusing connection from {}: {}", remote, dead.get().getMessage());
        closeQuietly(s);
        continue;
      }
      IoLoop loop = nextLoop();
      ServerSession session = new ServerSession(this, s, loop, remote);
      Admission.Decision<ServerSession> d = admission.admit(session, remote.getAddress());
      if (!d.admitted()) {
        LOG.debug("Refusing connection from {}: {} unauthenticated connections from its network", remote,
            settings.maxUnauthenticatedPerAddress());
        metrics.connectionRefused(TransportMetrics.Refusal.PER_ADDRESS);
        closeQuietly(s);
        continue;
      }
      metrics.connectionAccepted();
      d.evicted().ifPresent(old -> {
        metrics.admissionDropped();
        droppedLog.log(left -> LOG.info("Dropping an unauthenticated connection to make room: {} waiting ({}){}",
            settings.maxUnauthenticated(), TransportOption.MAX_UNAUTHENTICATED.key(), leftOut(left)));
        old.socket().close(new DroppedToMakeRoom(
            "dropped unauthenticated to make room (" + settings.maxUnauthenticated() + " waiting)"));
      });
      sessions.add(session);
      if (closing) {
        session.close();
        return;
      }
      sessionAccepted(session);
      loop.register(s, session.socket());
    }
  }

  /**
   * Takes {@code n} bytes of the request memory all sessions share, if it is {@code s}'s turn; if
   * not, {@code s} waits in line and is resumed (its reading, which the caller pauses) when its
   * turn comes (see {@link SharedRequestMemory}).
   */
  boolean takeRequestBytes(ServerSession s, int n) {
    return requestMemory.take(s, n);
  }

  /** Returns request memory taken with {@link #takeRequestBytes}; the sessions first in line get it. */
  void returnRequestBytes(long n) {
    requestMemory.give(n);
  }

  /**
   * A session that has just proven its peer asks to join the authenticated ones. Below {@code
   * maxConnections} it does; at the bound the authenticated session quiet longest (past the idle
   * timeout) is closed to make room for it; otherwise it is refused. Only a peer that proved the
   * secret can make room this way, so a bare TCP connect never closes anyone.
   *
   * @return whether the session may open
   */
  synchronized boolean admitAuthenticated(ServerSession s) {
    if (!sessions.contains(s)) {
      return false; // closed meanwhile
    }
    if (authenticatedCount.get() >= settings.maxConnections() && !closeLongestIdle()) {
      refusedLog.log(left -> LOG.warn("Refusing connection from {}: {} authenticated connections open ({}){}",
          s.remoteAddress(), settings.maxConnections(), TransportOption.MAX_CONNECTIONS.key(), leftOut(left)));
      metrics.connectionRefused(TransportMetrics.Refusal.MAX_CONNECTIONS);
      return false;
    }
    authenticatedCount.incrementAndGet();
    s.admitted = true;
    return true;
  }

  /**
   * At the connection bound: closes the authenticated session that has been quiet longest, if it
   * has been quiet for at least the idle timeout, so that connections a peer opened and left
   * cannot keep others out.
   *
   * @return whether it closed one
   */
  private boolean closeLongestIdle() {
    long now = System.nanoTime();
    ServerSession quietest = null;
    long longest = settings.idleTimeoutNanos() - 1;
    for (ServerSession s : sessions) {
      if (!s.isAuthenticated() || s.busy()) {
        continue;
      }
      long quiet = s.socket().quietFor(now);
      if (quiet > longest) {
        longest = quiet;
        quietest = s;
      }
    }
    if (quietest == null) {
      return false;
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(longest);
    droppedLog.log(left -> LOG.info("Closing a connection idle for {} ms to make room: {} connections open ({}){}",
        ms, settings.maxConnections(), TransportOption.MAX_CONNECTIONS.key(), leftOut(left)));
    quietest.socket().close(new DroppedToMakeRoom("idle for " + ms + " ms; closed to make room for a new connection ("
        + settings.maxConnections() + " open)"));
    return true;
  }

  /**
   * Why a selector thread of this transport died, if one did (it logged that, and closed its
   * connections): the transport then takes no new connections rather than hand some of them to
   * a thread that would never serve them.
   */
  private Optional<TransportUnavailableException> deadLoop() {
    for (IoLoop l : loops) {
      Optional<TransportUnavailableException> d = l.death();
      if (d.isPresent()) {
        return d;
      }
    }
    return Optional.empty();
  }

  /** The selector loop for a new connection, in turn. */
  private IoLoop nextLoop() {
    return loops[Math.floorMod(loopTurn.getAndIncrement(), loops.length)];
  }

  /**
   * Why a connection was closed to make room (an unauthenticated one by {@link Admission}, an idle
   * one at the connection bound); logged by the drop, not the session.
   */
  static final class DroppedToMakeRoom extends TransportTimeoutException {
    private static final long serialVersionUID = 1L;

    DroppedToMakeRoom(String message) {
      super(message);
    }
  }

  /** Limits the lines sessions log when they end badly (refused handshakes, violations, time-outs). */
  LogLimiter sessionEndLog() {
    return sessionEndLog;
  }

  static String leftOut(long lines) {
    return lines == 0 ? "" : " (" + lines + " more such lines left out)";
  }

  private static void closeQuietly(java.nio.channels.Channel s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing more to do for a socket we are dropping
    }
  }

  /** Unauthenticated connections waiting in {@link Admission}; for tests and diagnostics. */
  public int unauthenticatedCount() {
    return admission.waiting();
  }

  /** Accepted connections open now; for tests and diagnostics. */
  public int sessionCount() {
    return sessions.size();
  }

  /** Connections, accepted and made, that hold a sealing buffer now (encrypted ones while they write). */
  public int sealBuffersHeld() {
    int n = 0;
    for (ServerSession s : sessions) {
      n += s.socket().holdsSealBuffer() ? 1 : 0;
    }
    for (CarrierConnection c : connections) {
      n += c.holdsSealBuffer() ? 1 : 0;
    }
    return n;
  }

  /**
   * Runs the message handler on the handler threads, for a request from the authenticated peer
   * {@code peerNode} whose connection comes from {@code peerAddress} (one that came over a
   * READ-less data path too, such as verbs' message channels: the address of the peer's tcp
   * session). Completes with the handler's answer, exceptionally with what the handler threw or
   * failed with (a null answer is a failure).
   */
  public CompletableFuture<ByteBuffer> runHandler(long peerNode, InetAddress peerAddress, ByteBuffer message) {
    try {
      return CompletableFuture.supplyAsync(() -> handler.handle(peerNode, peerAddress, message), handlerPool)
          .thenCompose(f -> f == null
              ? CompletableFuture.failedFuture(new IllegalStateException("handler returned null")) : f);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closing"));
    }
  }

  /** Runs {@code task} on the set-up threads; fails with PeerClosedException once closing. */
  CompletableFuture<Void> runSetup(Runnable task) {
    try {
      return CompletableFuture.runAsync(task, setupPool);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closing"));
    }
  }

  private void checkDeadlines() {
    try {
      long now = System.nanoTime();
      for (ServerSession s : sessions) {
        s.checkDeadlines(now);
      }
      for (CarrierConnection c : connections) {
        c.checkDeadlines(now);
      }
    } catch (RuntimeException e) {
      LOG.error("deadline check failed", e);
    }
  }

  /** {@code s} sent a well-formed HELLO (see {@link Admission}). */
  void sessionGreeted(ServerSession s) {
    admission.greeted(s);
  }

  /**
   * Closes {@code s} when its handshake deadline passes unauthenticated: one check of the timer's,
   * due just after the deadline, dropped when the session authenticates or closes (so at most one
   * queued for each session Admission holds).
   */
  private void sessionAccepted(ServerSession s) {
    long due = s.authDeadline() - System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
    try {
      s.watchHandshake(timer.schedule(() -> s.checkDeadlines(System.nanoTime()), due, TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      s.close(); // closing: the timer is gone
    }
  }

  void sessionAuthenticated(ServerSession s) {
    admission.done(s);
    s.watchHandshake(null);
  }

  void sessionClosed(ServerSession s) {
    admission.done(s);
    s.watchHandshake(null);
    requestMemory.forget(s);
    synchronized (this) { // with admitAuthenticated: a session is counted exactly while admitted and open
      if (sessions.remove(s) && s.admitted) {
        authenticatedCount.decrementAndGet();
      }
    }
  }

  void connectionClosed(CarrierConnection c) {
    connections.remove(c);
  }

  /**
   * Stops listening, closes every connection, stops the selector loops (waiting for a READ being
   * written right now) and the threads. Idempotent.
   */
  @Override
  public void close() {
    // Once; a caller that comes while another closes waits for that close to end.
    synchronized (closeLock) {
      if (closing) {
        return;
      }
      closing = true;
      try {
        listener.close();
      } catch (IOException ignored) {
        // the acceptor ends either way
      }
      for (CarrierConnection c : connections) {
        c.close();
      }
      for (ServerSession s : sessions) {
        s.close();
      }
      // Their sockets are closed, so queued READ answers released their regions; stopping the
      // loops waits for a READ being sealed or written right now.
      long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      for (IoLoop l : loops) {
        l.close(Math.max(1, waitUntil - System.nanoTime()));
      }
      try {
        acceptor.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitUntil - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      handlerPool.shutdownNow();
      connectPool.shutdownNow();
      proofPool.shutdownNow();
      setupPool.shutdownNow();
      timer.shutdownNow();
      selfHold.close();
    }
  }


  @Override
  public String toString() {
    return "Carrier[" + localAddress + ", " + services + "]";
  }
}
