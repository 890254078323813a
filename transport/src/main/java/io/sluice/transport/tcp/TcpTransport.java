package io.sluice.transport.tcp;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import io.sluice.transport.shm.ShmArena;
import io.sluice.transport.shm.ShmPeer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tcp/shm transport endpoint. Threads: one acceptor; {@code ioThreads} selector loops that
 * serve every connection, accepted (handshake, READs, requests) or made (answers), however many;
 * a pool for message handlers; a pool that runs outgoing handshakes (one thread per connect in
 * progress, idle threads end after a minute); one timer that enforces every deadline.
 * Accepted connections that have not authenticated are bounded by {@link Admission}. Regions are
 * plain direct buffers, or files in the {@link ShmArena} when same-host peers may read them
 * through shared memory. Thread safe.
 */
final class TcpTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

  private final Settings settings;
  private final MessageHandler handler;
  private final TcpTransportProvider.ShmMode shmMode;
  private final Optional<ProviderSetup> providerSetup;
  private final long nodeId;
  private final Handshake handshake;
  private final RegionTable regions = new RegionTable();
  private final AtomicInteger liveRegions = new AtomicInteger();
  private final Optional<ShmArena> arena;
  private final ServerSocketChannel listener;
  private final NodeAddress localAddress;
  private final Set<ServerSession> sessions = ConcurrentHashMap.newKeySet();
  private final Admission<ServerSession> admission;
  private final IoLoop[] loops;
  private final Thread acceptor;
  private final AtomicInteger loopTurn = new AtomicInteger();
  private final Set<TcpConnection> connections = ConcurrentHashMap.newKeySet();
  private final ExecutorService handlerPool;
  private final ExecutorService connectPool;
  private final ScheduledExecutorService timer;
  private volatile boolean closing;

  TcpTransport(Settings settings, MessageHandler handler, TcpTransportProvider.ShmMode shmMode)
      throws TransportException {
    this(settings, handler, shmMode, Optional.empty());
  }

  TcpTransport(Settings settings, MessageHandler handler, TcpTransportProvider.ShmMode shmMode,
      Optional<ProviderSetup> providerSetup) throws TransportException {
    this.settings = settings;
    this.providerSetup = providerSetup;
    this.handler = handler;
    this.shmMode = shmMode;
    this.handshake = new Handshake(settings.secret());
    long id;
    do {
      id = new SecureRandom().nextLong();
    } while (id == 0 || id == GRANTED_ONLY);
    this.nodeId = id;
    this.arena = shmMode == TcpTransportProvider.ShmMode.OFF
        ? Optional.empty() : Optional.of(ShmArena.open(settings.shmDir(), nodeId));
    try {
      listener = ServerSocketChannel.open();
      listener.bind(new InetSocketAddress(settings.bindHost(), settings.port()), 256);
    } catch (IOException e) {
      arena.ifPresent(ShmArena::close);
      throw new TransportUnavailableException("cannot listen on " + settings.bindHost() + ":" + settings.port()
          + ": " + e.getMessage(), e);
    }
    int port = listener.socket().getLocalPort();
    this.localAddress = new NodeAddress(advertisedHost(settings), port);
    String tag = String.format("%04x", nodeId & 0xffff);
    this.handlerPool = Executors.newFixedThreadPool(settings.handlerThreads(), daemon("sluice-handler-" + tag));
    this.connectPool = Executors.newCachedThreadPool(daemon("sluice-connect-" + tag));
    this.timer = Executors.newSingleThreadScheduledExecutor(daemon("sluice-timer-" + tag));
    this.admission = new Admission<>(settings.maxUnauthenticated(), settings.maxUnauthenticatedPerAddress());
    this.loops = new IoLoop[settings.ioThreads()];
    try {
      for (int i = 0; i < loops.length; i++) {
        loops[i] = new IoLoop("sluice-io-" + tag + "-" + (i + 1));
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
      timer.shutdownNow();
      arena.ifPresent(ShmArena::close);
      throw new TransportUnavailableException("cannot open a selector: " + e.getMessage(), e);
    }
    timer.scheduleWithFixedDelay(this::checkDeadlines, 50, 50, TimeUnit.MILLISECONDS);
    acceptor = daemon("sluice-acceptor-" + tag).newThread(this::acceptLoop);
    acceptor.start();
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

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  Settings settings() {
    return settings;
  }

  Handshake handshake() {
    return handshake;
  }

  RegionTable regions() {
    return regions;
  }

  Optional<ShmArena> shm() {
    return arena;
  }

  /** Serves VERBS_SETUP frames; empty for plain tcp and shm transports. */
  Optional<ProviderSetup> providerSetup() {
    return providerSetup;
  }

  boolean isClosing() {
    return closing;
  }

  @Override
  public String provider() {
    return shmMode == TcpTransportProvider.ShmMode.REQUIRED ? "shm" : "tcp";
  }

  @Override
  public long nodeId() {
    return nodeId;
  }

  @Override
  public NodeAddress localAddress() {
    return localAddress;
  }

  @Override
  public RegisteredRegion allocateFor(long reader, int length) throws TransportException {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length);
    }
    checkOpen();
    if (arena.isPresent()) {
      ShmArena.Allocation a;
      try {
        a = arena.get().allocate(length);
      } catch (IOException e) {
        throw new TransportException("cannot allocate " + length + " bytes of shared memory: " + e.getMessage(), e);
      }
      return register(a.buffer(), reader, a.file(), 0, () -> deleteQuietly(a.file()));
    }
    ByteBuffer memory;
    try {
      memory = ByteBuffer.allocateDirect(length);
    } catch (OutOfMemoryError e) {
      throw new TransportException("cannot allocate " + length + " bytes of direct memory: " + e.getMessage(), e);
    }
    return register(memory, reader, null, 0, () -> { });
  }

  @Override
  public RegisteredRegion registerFile(Path file, long offset, long length) throws IOException {
    checkOpen();
    if (offset < 0 || length < 0 || length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("cannot register [" + offset + ", +" + length + ") of " + file
          + ": offset must be >= 0 and length in 0.." + Integer.MAX_VALUE);
    }
    Path abs = file.toAbsolutePath();
    MappedByteBuffer mapped;
    try (FileChannel ch = FileChannel.open(abs, StandardOpenOption.READ)) {
      long size = ch.size();
      if (offset + length > size) {
        throw new IOException("cannot register [" + offset + ", +" + length + ") of " + abs + ": file has " + size + " bytes");
      }
      mapped = ch.map(FileChannel.MapMode.READ_ONLY, offset, length);
    }
    return register(mapped, ANY_PEER, arena.isPresent() ? abs : null, offset, () -> { });
  }

  private Region register(ByteBuffer memory, long reader, Path shmFile, long fileOffset, Runnable afterFree)
      throws TransportException {
    long key = regions.newKey();
    int slot;
    try {
      slot = shmFile != null ? arena.get().takeSlot(key) : -1;
    } catch (TransportException e) {
      DirectMemory.free(memory);
      afterFree.run();
      throw e;
    }
    RemoteDescriptor d = new RemoteDescriptor(nodeId, 0, memory.capacity(), key);
    Region.ShmLocation loc = shmFile != null ? new Region.ShmLocation(shmFile.toString(), fileOffset, slot) : null;
    Runnable revoke = () -> {
      regions.revoke(key);
      if (slot >= 0) {
        arena.get().revokeSlot(slot);
      }
    };
    Runnable free = () -> {
      DirectMemory.free(memory);
      if (slot >= 0) {
        arena.get().freeSlot(slot);
      }
      afterFree.run();
      liveRegions.decrementAndGet();
    };
    Region region = new Region(d, reader, memory, loc, revoke, free);
    liveRegions.incrementAndGet();
    regions.add(region);
    return region;
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", file, e.getMessage());
    }
  }

  @Override
  public CompletableFuture<Connection> connect(NodeAddress peer) {
    if (closing) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closed"));
    }
    CompletableFuture<Connection> result = new CompletableFuture<>();
    try {
      connectPool.execute(() -> {
        try {
          result.complete(doConnect(peer));
        } catch (TransportException e) {
          result.completeExceptionally(e);
        } catch (IOException | RuntimeException e) {
          result.completeExceptionally(new PeerClosedException("cannot connect to " + peer + ": " + e, e));
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      result.completeExceptionally(new PeerClosedException("transport is closed"));
    }
    return result;
  }

  private Connection doConnect(NodeAddress peer) throws IOException {
    long timeoutMs = TimeUnit.NANOSECONDS.toMillis(settings.connectTimeoutNanos());
    SocketChannel socket = SocketChannel.open();
    FrameChannel channel = new FrameChannel(socket, settings.ioTimeoutNanos());
    java.util.concurrent.atomic.AtomicBoolean timedOut = new java.util.concurrent.atomic.AtomicBoolean();
    ScheduledFuture<?> deadline = timer.schedule(() -> {
      timedOut.set(true);
      channel.close();
    }, settings.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
    try {
      try {
        socket.socket().connect(new InetSocketAddress(peer.host(), peer.port()), (int) Math.max(1, timeoutMs));
      } catch (SocketTimeoutException e) {
        throw new TransportTimeoutException("connecting to " + peer + " took longer than " + timeoutMs + " ms", e);
      }
      socket.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
      long peerNode = TcpConnection.authenticate(channel, handshake, nodeId,
          settings.encryption() ? Handshake.FLAG_ENCRYPT : 0);
      TcpConnection conn = new TcpConnection(this, socket, channel.sealer(), channel.opener(), nextLoop(), peer,
          peerNode);
      connections.add(conn);
      conn.start();
      if (shmMode != TcpTransportProvider.ShmMode.OFF) {
        Optional<ShmPeer> memory = ShmPeer.attach(conn.shmCarrier(), settings.connectTimeoutNanos());
        if (memory.isPresent()) {
          conn.useShm(memory.get());
        } else if (shmMode == TcpTransportProvider.ShmMode.REQUIRED) {
          conn.close();
          throw new TransportUnavailableException("provider shm: peer " + peer + " is not on this host or has no shared memory");
        }
      }
      if (!deadline.cancel(false)) {
        conn.close();
        throw new TransportTimeoutException("connecting to " + peer + " took longer than " + timeoutMs + " ms");
      }
      return conn;
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
      if (sessions.size() >= settings.maxConnections()) {
        LOG.warn("Refusing connection from {}: {} connections open ({})", remote, settings.maxConnections(),
            io.sluice.transport.TransportOption.MAX_CONNECTIONS.key());
        closeQuietly(s);
        continue;
      }
      IoLoop loop = nextLoop();
      ServerSession session = new ServerSession(this, s, loop, remote);
      Admission.Decision<ServerSession> d = admission.admit(session, remote.getAddress());
      if (!d.admitted()) {
        LOG.debug("Refusing connection from {}: {} unauthenticated connections from that address", remote,
            settings.maxUnauthenticatedPerAddress());
        closeQuietly(s);
        continue;
      }
      d.evicted().ifPresent(old -> old.socket().close(new TransportTimeoutException(
          "dropped unauthenticated to make room (" + settings.maxUnauthenticated() + " waiting)")));
      sessions.add(session);
      if (closing) {
        session.close();
        return;
      }
      loop.register(s, session.socket());
    }
  }

  /** The selector loop for a new connection, in turn. */
  private IoLoop nextLoop() {
    return loops[Math.floorMod(loopTurn.getAndIncrement(), loops.length)];
  }

  private static void closeQuietly(java.nio.channels.Channel s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing more to do for a socket we are dropping
    }
  }

  /** Unauthenticated connections waiting in {@link Admission}; for tests and diagnostics. */
  int unauthenticatedCount() {
    return admission.waiting();
  }

  /** Accepted connections open now. */
  int sessionCount() {
    return sessions.size();
  }

  CompletableFuture<ByteBuffer> runHandler(long peerNode, ByteBuffer message) {
    try {
      return CompletableFuture.supplyAsync(() -> handler.handle(peerNode, message), handlerPool)
          .thenCompose(f -> f == null
              ? CompletableFuture.failedFuture(new IllegalStateException("handler returned null")) : f);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new PeerClosedException("transport is closing"));
    }
  }

  private void checkDeadlines() {
    try {
      long now = System.nanoTime();
      for (ServerSession s : sessions) {
        s.checkDeadlines(now);
      }
      for (TcpConnection c : connections) {
        c.checkDeadlines(now);
      }
    } catch (RuntimeException e) {
      LOG.error("deadline check failed", e);
    }
  }

  void sessionAuthenticated(ServerSession s) {
    admission.done(s);
  }

  void sessionClosed(ServerSession s) {
    admission.done(s);
    sessions.remove(s);
  }

  void connectionClosed(TcpConnection c) {
    connections.remove(c);
  }

  private void checkOpen() throws TransportException {
    if (closing) {
      throw new TransportException("transport is closed");
    }
  }

  @Override
  public int liveRegionCount() {
    return liveRegions.get();
  }

  @Override
  public void close() {
    if (closing) {
      return;
    }
    closing = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // the acceptor ends either way
    }
    for (TcpConnection c : connections) {
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
    for (Region r : regions.liveRegions()) {
      LOG.warn("Transport closed with a region still registered: {}", r);
      r.close();
    }
    handlerPool.shutdownNow();
    connectPool.shutdownNow();
    timer.shutdownNow();
    arena.ifPresent(ShmArena::close);
  }

  @Override
  public String toString() {
    return "TcpTransport[" + provider() + ", " + localAddress + "]";
  }

}
