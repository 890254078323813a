package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.memory.RegisteredAllocator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Connections a server opens back to its callers' transports to READ request bodies that stay
 * in the caller's registered memory. One connection per calling node, opened on first need,
 * reused, and closed by {@link #closeIdle} once no READ used it for the idle time; a connection is
 * accepted only if the transport it reaches is the very node that sent the call (the descriptor
 * names that node too), so a caller cannot point the server at someone else's memory.
 *
 * <p>Bodies land in {@code landing}, whose limit bounds the registered memory all callers' bodies
 * take at once: {@link #read} waits for room until its deadline, so it must not run on a transport
 * thread, and a landed body holds its room until {@link #done}.
 *
 * <p>Owns its connections. Thread safe.
 */
final class CallerConnections implements AutoCloseable {
  /** A connection and what keeps it open: READs under way, and when the last one began. */
  private static final class Caller {
    final CompletableFuture<Connection> connection;
    final AtomicInteger reading = new AtomicInteger();
    volatile long lastUsedNanos = System.nanoTime();

    Caller(CompletableFuture<Connection> connection) {
      this.connection = connection;
    }

    boolean usable() {
      return !connection.isDone() || (!connection.isCompletedExceptionally() && connection.join().isOpen());
    }
  }

  private final Transport transport;
  private final RegisteredAllocator landing;
  private final long idleNanos;
  private final Map<Long, Caller> callers = new ConcurrentHashMap<>();
  private volatile boolean closed;

  CallerConnections(Transport transport, RegisteredAllocator landing, long idleMs) {
    this.transport = transport;
    this.landing = landing;
    this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMs);
  }

  /**
   * READs the body into registered memory of {@code landing}, waiting for room until {@code
   * deadlineNanos}; the caller hands the region back with {@link #done}.
   */
  CompletableFuture<RegisteredRegion> read(long callerNode, NodeAddress callerAddress, Remote body, long deadlineNanos) {
    RegisteredRegion region;
    try {
      region = landing.allocate(body.length(), deadlineNanos);
    } catch (TimeoutException e) {
      return CompletableFuture.failedFuture(new java.io.IOException("no room for a request body of " + body.length()
          + " bytes: the server holds " + landing.allocatedBytes() + " bytes of bodies (limit "
          + landing.limit() + ", " + SluiceRpcOption.SERVER_MAX_INCOMING_BODY_BYTES.key() + ")", e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CompletableFuture.failedFuture(new java.io.InterruptedIOException("interrupted waiting for body memory"));
    } catch (TransportException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    Caller caller = caller(callerNode, callerAddress);
    caller.reading.incrementAndGet();
    caller.lastUsedNanos = System.nanoTime();
    CompletableFuture<RegisteredRegion> landed = caller.connection
        .thenCompose(c -> c.read(body.descriptor(), 0, region, 0, body.length()))
        .thenApply(done -> region);
    landed.whenComplete((r, t) -> {
      caller.lastUsedNanos = System.nanoTime();
      caller.reading.decrementAndGet();
      if (t != null) {
        landing.free(region); // a failed READ may still land late: never reuse it
      }
    });
    return landed;
  }

  /** Gives back a region {@link #read} returned, once its bytes are no longer needed. */
  void done(RegisteredRegion region) {
    landing.release(region);
  }

  /** The most registered memory bodies took at once. */
  long peakBytes() {
    return landing.peakBytes();
  }

  /** Connections open or opening now. */
  int open() {
    return callers.size();
  }

  /** Closes the connections no READ used for the idle time; called periodically. */
  void closeIdle(long nowNanos) {
    for (Map.Entry<Long, Caller> e : callers.entrySet()) {
      Caller c = e.getValue();
      boolean idle = c.reading.get() == 0 && nowNanos - c.lastUsedNanos > idleNanos;
      if ((idle || !c.usable()) && callers.remove(e.getKey(), c)) {
        c.connection.thenAccept(Connection::close);
      }
    }
  }

  private Caller caller(long callerNode, NodeAddress callerAddress) {
    if (closed) {
      return new Caller(CompletableFuture.failedFuture(new IllegalStateException("the RPC server's transport is closed")));
    }
    Caller caller = callers.compute(callerNode, (node, existing) -> {
      if (existing != null && existing.usable()) {
        existing.lastUsedNanos = System.nanoTime();
        return existing;
      }
      if (existing != null) {
        existing.connection.thenAccept(Connection::close);
      }
      return new Caller(transport.connect(callerAddress).thenApply(c -> {
        if (c.peerNode() != callerNode) {
          c.close();
          throw new CompletionException(new AuthenticationFailedException("the transport at " + callerAddress
              + " is node " + Long.toHexString(c.peerNode()) + ", not the calling node " + Long.toHexString(callerNode)));
        }
        return c;
      }));
    });
    // A failed attempt is not cached: the next call tries again.
    caller.connection.whenComplete((c, t) -> {
      if (t != null) {
        callers.remove(callerNode, caller);
      }
    });
    return caller;
  }

  @Override
  public void close() {
    closed = true;
    for (Caller c : callers.values()) {
      c.connection.thenAccept(Connection::close);
    }
    callers.clear();
  }
}
