package io.sluice.transport;

import java.nio.ByteBuffer;

/**
 * A read-only view of bytes of a peer's registered region, given by {@link Connection#view} where
 * the data path maps the peer's memory (shm): no copy is made. While the view is open the mapping
 * stays, so the bytes stay readable even if the peer revokes or frees the region, but they are
 * the peer's memory: they stay as the peer wrote them only while the peer keeps the region (an
 * application protocol keeps the peer from reusing it until the view is closed).
 *
 * <p>Thread safe. {@link #close()} is idempotent; the buffer must not be used after it.
 */
public interface RemoteView extends AutoCloseable {
  /** The viewed bytes, read-only, position 0, limit the viewed length (a fresh duplicate each call). */
  ByteBuffer buffer();

  /** Releases the mapping's hold. */
  @Override
  void close();
}
