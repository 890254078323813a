package io.sluice.spark.shuffle.fetch;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * One connection per peer executor, shared by every reduce task of this executor: opened on first
 * use, opened again once it failed, was closed, or a task discarded it after a failure.
 *
 * <p>Thread safe. Owns the connections it opened; {@link #close} closes them, including those
 * still being opened (when they complete).
 */
public final class PeerConnections implements AutoCloseable {
  private final Function<NodeAddress, CompletableFuture<Connection>> connect;
  private final Map<NodeAddress, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();

  /** @param connect opens a connection to a peer (the transport's {@code connect}) */
  public PeerConnections(Function<NodeAddress, CompletableFuture<Connection>> connect) {
    this.connect = connect;
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
      return connect.apply(address);
    });
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
