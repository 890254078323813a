package io.sluice.spark.shuffle.fetch;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * One connection per peer executor, shared by every reduce task of this executor: opened on first
 * use, opened again once it failed, was closed, or a task discarded it after a failure.
 *
 * <p>The time from asking to a usable connection is reported for the first connection to each
 * peer (the cold one: the handshake's first signatures, the first shm attach), for at most {@link
 * #MAX_TIMED_PEERS} peers.
 *
 * <p>Thread safe. Owns the connections it opened; {@link #close} closes them, including those
 * still being opened (when they complete).
 */
public final class PeerConnections implements AutoCloseable {
  /** Peers whose first connection is timed; later peers connect untimed. */
  public static final int MAX_TIMED_PEERS = 65_536;

  private final Function<NodeAddress, CompletableFuture<Connection>> connect;
  private final LongConsumer firstConnectNanos;
  private final Map<NodeAddress, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
  private final Set<NodeAddress> connectedOnce = ConcurrentHashMap.newKeySet();

  /** @param connect opens a connection to a peer (the transport's {@code connect}) */
  public PeerConnections(Function<NodeAddress, CompletableFuture<Connection>> connect) {
    this(connect, nanos -> { });
  }

  /**
   * @param connect opens a connection to a peer (the transport's {@code connect})
   * @param firstConnectNanos told how long each peer's first usable connection took, on the
   *     thread that completed it
   */
  public PeerConnections(Function<NodeAddress, CompletableFuture<Connection>> connect, LongConsumer firstConnectNanos) {
    this.connect = connect;
    this.firstConnectNanos = firstConnectNanos;
  }

  /** The connection to a peer, opening one if there is none usable. */
  public CompletableFuture<Connection> connection(NodeAddress peer) {
    return connections.compute(peer, (address, existing) -> {
      if (existing != null && !existing.isCompletedExceptionally()
          && (!existing.isDone() || existing.join().isOpen())) {
        return existing;
      }
      if (existing != null && existing.isDone() && !existing.isCompletedExceptionally()) {
        existing.join().close();
      }
      return open(address);
    });
  }

  private CompletableFuture<Connection> open(NodeAddress peer) {
    long asked = System.nanoTime();
    CompletableFuture<Connection> f = connect.apply(peer);
    f.thenRun(() -> {
      if (connectedOnce.size() < MAX_TIMED_PEERS && connectedOnce.add(peer)) {
        firstConnectNanos.accept(System.nanoTime() - asked);
      }
    });
    return f;
  }

  /**
   * Starts connecting to at most {@code max} of {@code peers} that have no usable connection or
   * one being opened, without waiting: a reduce task calls it as soon as it knows whom it will
   * read, so the handshakes run while it decides how to read and reads its local blocks. The
   * connections are the shared ones {@link #connection} hands out, owned and closed here like
   * them.
   *
   * @return how many connections it started
   */
  public int connectAhead(Collection<NodeAddress> peers, int max) {
    int started = 0;
    for (NodeAddress peer : new LinkedHashSet<>(peers)) {
      if (started >= max) {
        break;
      }
      CompletableFuture<Connection> existing = connections.get(peer);
      if (existing == null || existing.isCompletedExceptionally()
          || (existing.isDone() && !existing.join().isOpen())) {
        connection(peer);
        started++;
      }
    }
    return started;
  }

  /** Forgets a connection that failed, and closes it, so the next task reconnects. */
  public void discard(NodeAddress peer, CompletableFuture<Connection> failed) {
    if (connections.remove(peer, failed)) {
      failed.thenAccept(Connection::close);
    }
  }

  @Override
  public void close() {
    connections.values().forEach(f -> f.thenAccept(Connection::close));
    connections.clear();
  }
}
