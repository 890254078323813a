package io.sluice.flight.loader;

import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A shard as a {@link FlightLoader} delivers it: its record batches, in the order the server sent
 * them, in memory of the loader's allocator. The receiver owns it and closes it (which frees the
 * batches); its cursor is where a loader resumed after this shard starts. Not thread safe.
 *
 * @param shard which shard
 * @param cursor the epoch and this shard's position among the rank's shards of that epoch
 * @param batches the record batches (owned by this object)
 * @param bodyBytes bytes of Arrow buffers delivered
 * @param dataPath "verbs", "tcp", "shm" or "grpc": how the bodies travelled
 */
public record LoadedShard(Shard shard, Cursor cursor, List<VectorSchemaRoot> batches, long bodyBytes,
    String dataPath) implements AutoCloseable {

  /** The cursor a loader resumed right after this shard starts at. */
  public Cursor cursorAfter() {
    return cursor.advance();
  }

  public long rows() {
    long n = 0;
    for (VectorSchemaRoot b : batches) {
      n += b.getRowCount();
    }
    return n;
  }

  @Override
  public void close() {
    batches.forEach(VectorSchemaRoot::close);
  }
}
