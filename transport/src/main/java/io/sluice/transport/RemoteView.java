package io.sluice.transport;

import java.nio.ByteBuffer;

/**
 * A read-only view of bytes of a peer's registered region, given by {@link Connection#view} where
 * the data path maps the peer's memory (shm): no copy is made. While the view is open the mapping
 * and the peer's file stay, so the bytes stay readable even if the peer revokes or frees the
 * region, but they are the peer's memory: they stay as the peer wrote them only while the peer
 * keeps the region (an application protocol keeps the peer from reusing it until the view is
 * closed).
 *
 * <p>Two ways to read it. {@link #buffer()} is the mapping itself: nothing is copied, but any
 * process of the same user can shorten the peer's file under it, and touching bytes past the
 * file's new end then faults, which the JVM reports as an {@code InternalError} (fatal to Spark's
 * executors), often only after the access has returned zeros. {@link #read} copies with positional
 * reads of the file instead, and a shortened file fails it with a {@link RegionTruncatedException}.
 * Read a peer's registered file with {@link #read}; hand out {@link #buffer()} only where a
 * fault would be acceptable.
 *
 * <p>Thread safe. {@link #close()} is idempotent; the view must not be used after it.
 */
public interface RemoteView extends AutoCloseable {
  /** The viewed bytes, read-only, position 0, limit the viewed length (a fresh duplicate each call). */
  ByteBuffer buffer();

  /** The viewed length in bytes. */
  long length();

  /**
   * Copies the view's bytes from {@code offset} into {@code dst}'s remaining bytes, advancing its
   * position; the mapping is not touched.
   *
   * @throws RegionTruncatedException if the peer's file no longer holds them ({@code dst}'s position
   *     then says how many arrived)
   * @throws ReadOutOfBoundsException if they lie outside the view
   * @throws TransportException if the file cannot be read
   */
  void read(long offset, ByteBuffer dst) throws TransportException;

  /** Releases the mapping's hold. */
  @Override
  void close();
}
