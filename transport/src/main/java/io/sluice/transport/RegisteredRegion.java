package io.sluice.transport;

import java.nio.ByteBuffer;

/**
 * Off-heap memory registered with a {@link Transport}, readable by authenticated peers through
 * its {@link #descriptor()} and usable locally as a READ destination.
 *
 * <p>Reference counting follows one contract: a region starts with one reference, owned by
 * whoever registered it. {@link #retain()} and {@link #release()} add and drop references; the
 * memory is unmapped or freed when the count reaches zero. {@link #close()} revokes remote access
 * at once (later READs of its key fail with {@link RegionRevokedException}) and drops the owner's
 * reference; READs already being served keep the memory alive until they finish.
 *
 * <p>Thread safe. The buffer returned by {@link #buffer()} is a fresh view each call; its
 * contents are shared, so writers and readers must agree on who touches which bytes.
 */
public interface RegisteredRegion extends AutoCloseable {
  /** The descriptor to send to peers. */
  RemoteDescriptor descriptor();

  /** Region length in bytes. */
  long length();

  /**
   * A new view of the whole region, position 0, limit {@link #length()}; read-only for regions
   * registered from files. Regions longer than {@link Integer#MAX_VALUE} are not supported.
   *
   * @throws IllegalStateException if the memory was already freed
   */
  ByteBuffer buffer();

  /**
   * Lets the authenticated peer {@code peerNode} READ this region too, until the returned grant
   * is closed. Meaningful for regions allocated for one reader or for {@link
   * Transport#GRANTED_ONLY} (a region every peer may read needs no grant). The check is the one
   * {@link Transport#allocateFor} describes: per READ on tcp, when the region is opened on shm, at
   * the owner's key look-up on verbs. Until the grant is closed, {@code peerNode} names one
   * identity key, as for {@link Transport#allocateFor}'s reader.
   */
  ReaderGrant allowReader(long peerNode);

  /** True until {@link #close()} revokes it. */
  boolean isOpen();

  /** Adds a reference. @throws IllegalStateException if the count already reached zero. */
  RegisteredRegion retain();

  /** Drops a reference; frees the memory when none remain. @return true if it was freed. */
  boolean release();

  /** Current reference count (0 once freed). */
  int refCnt();

  /** Revokes remote access and drops the owner's reference. Idempotent. */
  @Override
  void close();
}
