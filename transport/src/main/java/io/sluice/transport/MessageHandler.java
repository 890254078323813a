package io.sluice.transport;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * Serves two-sided request messages on the accepting side of a connection. Called from a
 * transport worker thread; long work should complete the future from elsewhere. The request
 * buffer is valid only during the call. A future completed exceptionally sends the peer an
 * error, which fails its request future with {@link RemoteHandlerException}.
 */
@FunctionalInterface
public interface MessageHandler {
  CompletableFuture<ByteBuffer> handle(long peerNode, ByteBuffer request);

  /** A handler that rejects every request. */
  MessageHandler REJECT_ALL =
      (peer, request) ->
          CompletableFuture.failedFuture(new UnsupportedOperationException("no message handler installed"));
}
