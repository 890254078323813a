package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Serves reducers' range requests ({@link RangeProtocol}) from this executor's map outputs: one
 * request per reduce task names every map output it needs here. Runs on transport handler
 * threads; the work is reading a few index entries.
 *
 * <p>A request comes from a peer, so its answer's size is bounded before anything is built for it:
 * the request's queries alone say how many offsets and checksums the answer holds, and a request
 * whose answer could not be sent ({@code maxResponseBytes}, the transport's message bound) is
 * refused before any index is read; the windows are counted as the answers are built, and the
 * building stops at the bound.
 *
 * <p>The transport needs its handler before the registry (which needs the transport) exists, so
 * the registry is bound once after opening; no peer knows the address before that, and a request
 * arriving earlier is refused. Thread safe.
 */
public final class RangeService implements MessageHandler {
  private final long maxResponseBytes;
  private volatile MapOutputRegistry registry;

  /** @param maxResponseBytes the largest response the transport sends (its message bound) */
  public RangeService(long maxResponseBytes) {
    if (maxResponseBytes <= 0) {
      throw new IllegalArgumentException("maxResponseBytes must be positive: " + maxResponseBytes);
    }
    this.maxResponseBytes = maxResponseBytes;
  }

  public void serve(MapOutputRegistry registry) {
    this.registry = registry;
  }

  @Override
  public CompletableFuture<ByteBuffer> handle(long peerNode, ByteBuffer request) {
    MapOutputRegistry registry = this.registry;
    if (registry == null) {
      return CompletableFuture.failedFuture(new IOException("shuffle range service is not started yet"));
    }
    try {
      RangeProtocol.Request r = RangeProtocol.decodeRequest(request);
      // Each answer holds at least one window: the smallest answer these queries can have.
      long least = RangeProtocol.responseBytes(r.queries());
      if (least > maxResponseBytes) {
        throw new MessageTooLargeException("range request of " + r.queries().size() + " queries needs an answer of at"
            + " least " + least + " bytes, above the bound of " + maxResponseBytes);
      }
      List<RangeProtocol.Answer> answers = new ArrayList<>(r.queries().size());
      long size = least;
      for (RangeProtocol.Query q : r.queries()) {
        RangeProtocol.Answer a = registry.describe(r.shuffleId(), q);
        size += (long) RemoteDescriptor.ENCODED_LENGTH * (a.windows().size() - 1);
        if (size > maxResponseBytes) {
          throw new MessageTooLargeException("range answer exceeds the bound of " + maxResponseBytes + " bytes");
        }
        answers.add(a);
      }
      return CompletableFuture.completedFuture(RangeProtocol.encodeResponse(answers));
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
