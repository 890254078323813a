package io.sluice.flight.plane;

import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.transport.Connection;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The one batched READ that fetches a body, in ranges of at most a chunk. Stateless. */
final class BodyReads {
  private BodyReads() {}

  /**
   * Starts READing {@code body} into {@code into} at {@code at}; the future completes when every
   * range has (or fails with the first failure).
   */
  static CompletableFuture<Void> start(Connection connection, BodyRef body, RegisteredRegion into, long at,
      int chunkBytes) {
    List<ReadRequest> ranges = new ArrayList<>();
    for (long off = 0; off < body.length(); off += chunkBytes) {
      int n = (int) Math.min(chunkBytes, body.length() - off);
      ranges.add(new ReadRequest(body.region(), body.offset() + off, into, at + off, n));
    }
    try {
      return CompletableFuture.allOf(connection.readBatch(ranges).toArray(CompletableFuture[]::new));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
