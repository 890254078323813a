package io.sluice.transport;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * Serves two-sided request messages on the accepting side of a connection. Called from a
 * transport worker thread; long work should complete the future from elsewhere. The request
 * buffer is valid only during the call. A future completed exceptionally sends the peer an
 * error, which fails its request future with {@link RemoteHandlerException}; a handler that
 * refuses for load (a bound on the peer's use, or on all peers' use, is reached, and the same
 * request may succeed later) fails it with {@link ResourceExhaustedException}, which the peer's
 * future fails with in turn, so that the peer can tell it asks again by the class alone.
 *
 * <p>The transports call {@link #handle(long, InetAddress, ByteBuffer)}, which also says where the
 * peer's connection comes from; a handler that does not care implements the two-argument form
 * alone.
 */
@FunctionalInterface
public interface MessageHandler {
  CompletableFuture<ByteBuffer> handle(long peerNode, ByteBuffer request);

  /**
   * Serves a request of {@code peerNode} whose connection comes from {@code peerAddress}: the
   * source address of the peer's connection as this side's socket sees it (a peer on this host
   * over shm: a loopback address, or whichever address of this host it connected from). The node
   * is what the peer proved; the address is only what the network says. The default ignores the
   * address.
   */
  default CompletableFuture<ByteBuffer> handle(long peerNode, InetAddress peerAddress, ByteBuffer request) {
    return handle(peerNode, request);
  }

  /** A handler that rejects every request. */
  MessageHandler REJECT_ALL =
      (peer, request) ->
          CompletableFuture.failedFuture(new UnsupportedOperationException("no message handler installed"));
}
