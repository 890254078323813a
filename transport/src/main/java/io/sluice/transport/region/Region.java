package io.sluice.transport.region;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.memory.AbstractReferenceCounted;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The registered region of the tcp and shm providers: a direct or mapped buffer, a descriptor,
 * and the reference count. The transport that made it supplies two hooks: {@code revoke} runs
 * once at {@link #close()} (it removes the key from the serving table at once), {@code free} runs
 * once when the last reference goes (it frees or unmaps the memory and deletes backing files).
 * The count follows {@link AbstractReferenceCounted}.
 *
 * <p>Thread safe. Serving threads call {@link #tryRetain()} before touching the memory and
 * {@link #release()} after, so a region closed mid-READ is freed only when that READ is done.
 */
public final class Region extends AbstractReferenceCounted implements RegisteredRegion {
  /** Where a region lives in shared memory, for peers on the same host; empty path if none. */
  public record ShmLocation(String path, long fileOffset, int slot) {}

  private final RemoteDescriptor descriptor;
  private final long reader;
  private final ByteBuffer memory;
  private final ShmLocation shm;
  private final Runnable revoke;
  private final Runnable free;
  private final PeerIdentities peers;
  private final AtomicBoolean open = new AtomicBoolean(true);
  /** Peers granted access besides {@code reader}, with how many grants each holds. */
  private final java.util.concurrent.ConcurrentHashMap<Long, Integer> granted = new java.util.concurrent.ConcurrentHashMap<>();
  /** Told the node id of a peer whose last grant was withdrawn; set once by a provider that enforces grants itself. */
  private volatile java.util.function.LongConsumer withdrawn = peer -> { };

  /**
   * A region that only the peer with node id {@code reader} may READ, or every authenticated peer
   * when it is {@link io.sluice.transport.Transport#ANY_PEER}. The reader's id, and each granted
   * peer's, is held in {@code peers} (the transport's) until the region is freed or the grant
   * closed, so that it names one identity key meanwhile.
   */
  public Region(RemoteDescriptor descriptor, long reader, ByteBuffer memory, ShmLocation shm, Runnable revoke,
      Runnable free, PeerIdentities peers) {
    if (memory.capacity() != descriptor.length()) {
      throw new IllegalArgumentException("buffer capacity " + memory.capacity() + " != " + descriptor.length());
    }
    this.descriptor = descriptor;
    this.reader = reader;
    this.memory = memory;
    this.shm = shm;
    this.revoke = revoke;
    this.peers = peers;
    PeerIdentities.Hold readerHold = peers.name(reader);
    this.free = () -> {
      readerHold.close();
      free.run();
    };
  }

  @Override
  public RemoteDescriptor descriptor() {
    return descriptor;
  }

  /** Whether the authenticated peer {@code peerNode} may READ this region. */
  public boolean readableBy(long peerNode) {
    return reader == io.sluice.transport.Transport.ANY_PEER || reader == peerNode
        || (!granted.isEmpty() && granted.containsKey(peerNode));
  }

  /** Whether every authenticated peer may READ this region ({@link io.sluice.transport.Transport#ANY_PEER}). */
  public boolean readableByEveryPeer() {
    return reader == io.sluice.transport.Transport.ANY_PEER;
  }

  @Override
  public io.sluice.transport.ReaderGrant allowReader(long peerNode) {
    PeerIdentities.Hold hold = peers.name(peerNode);
    granted.merge(peerNode, 1, Integer::sum);
    AtomicBoolean closed = new AtomicBoolean();
    return () -> {
      if (closed.compareAndSet(false, true)) {
        granted.computeIfPresent(peerNode, (k, n) -> n == 1 ? null : n - 1);
        if (!readableBy(peerNode)) {
          withdrawn.accept(peerNode);
        }
        hold.close();
      }
    };
  }

  /**
   * Calls {@code listener} with a peer's node id each time that peer loses the right to READ
   * this region because its last grant was closed (after {@link #readableBy} says so). For a
   * provider whose device checks access itself (verbs), which must then withdraw the peer's
   * access there too. The listener runs on the thread that closes the grant.
   */
  public void onGrantWithdrawn(java.util.function.LongConsumer listener) {
    this.withdrawn = listener;
  }

  @Override
  public long length() {
    return descriptor.length();
  }

  /** Where peers on this host find the bytes, if the region lives in a shared file. */
  public java.util.Optional<ShmLocation> shmLocation() {
    return java.util.Optional.ofNullable(shm);
  }

  @Override
  public ByteBuffer buffer() {
    if (refCnt() <= 0) {
      throw new IllegalStateException("region already freed");
    }
    return memory.duplicate().clear();
  }

  @Override
  public boolean isOpen() {
    return open.get();
  }

  @Override
  public Region retain() {
    super.retain();
    return this;
  }

  @Override
  protected void deallocate() {
    free.run();
  }

  @Override
  public void close() {
    if (open.compareAndSet(true, false)) {
      revoke.run();
      release();
    }
  }

  @Override
  public String toString() {
    return "Region[" + descriptor + ", refCnt=" + refCnt() + (open.get() ? "" : ", revoked") + "]";
  }
}
