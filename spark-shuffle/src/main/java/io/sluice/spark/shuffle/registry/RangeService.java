package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.MessageHandler;
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
 * <p>The transport needs its handler before the registry (which needs the transport) exists, so
 * the registry is bound once after opening; no peer knows the address before that, and a request
 * arriving earlier is refused. Thread safe.
 */
public final class RangeService implements MessageHandler {
  private volatile MapOutputRegistry registry;

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
      List<RangeProtocol.Answer> answers = new ArrayList<>(r.queries().size());
      for (RangeProtocol.Query q : r.queries()) {
        answers.add(registry.describe(r.shuffleId(), q));
      }
      return CompletableFuture.completedFuture(RangeProtocol.encodeResponse(answers));
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
