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

/**
 * Connections a server opens back to its callers' transports to READ request bodies that stay
 * in the caller's registered memory. One connection per calling node, opened on first need and
 * reused; a connection is accepted only if the transport it reaches is the very node that sent
 * the call (the descriptor names that node too), so a caller cannot point the server at someone
 * else's memory.
 *
 * <p>Owns its connections. Thread safe.
 */
final class CallerConnections implements AutoCloseable {
  private final Transport transport;
  private final RegisteredAllocator landing;
  private final Map<Long, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
  private volatile boolean closed;

  CallerConnections(Transport transport, RegisteredAllocator landing) {
    this.transport = transport;
    this.landing = landing;
  }

  /** READs the body into fresh registered memory and returns it as an array. */
  CompletableFuture<byte[]> read(long callerNode, NodeAddress callerAddress, Remote body) {
    return connection(callerNode, callerAddress).thenCompose(c -> {
      RegisteredRegion region;
      try {
        region = landing.allocate(body.length());
      } catch (TransportException | RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
      return c.read(body.descriptor(), 0, region, 0, body.length())
          .thenApply(done -> {
            byte[] bytes = new byte[body.length()];
            region.buffer().get(bytes);
            return bytes;
          })
          .whenComplete((bytes, t) -> {
            if (t == null) {
              landing.release(region);
            } else {
              landing.free(region); // a failed READ may still land late: never reuse it
            }
          });
    });
  }

  private CompletableFuture<Connection> connection(long callerNode, NodeAddress callerAddress) {
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("the RPC server's transport is closed"));
    }
    CompletableFuture<Connection> f = connections.compute(callerNode, (node, existing) -> {
      if (existing != null && (!existing.isDone()
          || (!existing.isCompletedExceptionally() && existing.join().isOpen()))) {
        return existing;
      }
      if (existing != null && existing.isDone() && !existing.isCompletedExceptionally()) {
        existing.join().close();
      }
      return transport.connect(callerAddress).thenApply(c -> {
        if (c.peerNode() != callerNode) {
          c.close();
          throw new CompletionException(new AuthenticationFailedException("the transport at " + callerAddress
              + " is node " + Long.toHexString(c.peerNode()) + ", not the calling node " + Long.toHexString(callerNode)));
        }
        return c;
      });
    });
    // A failed attempt is not cached: the next call tries again.
    f.whenComplete((c, t) -> {
      if (t != null) {
        connections.remove(callerNode, f);
      }
    });
    return f;
  }

  @Override
  public void close() {
    closed = true;
    for (CompletableFuture<Connection> f : connections.values()) {
      f.thenAccept(Connection::close);
    }
    connections.clear();
  }
}
