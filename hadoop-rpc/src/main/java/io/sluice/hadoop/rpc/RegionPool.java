package io.sluice.hadoop.rpc;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Registered memory kept for reuse: allocating (and zeroing) a fresh direct buffer per large body
 * costs more than the copy it serves. A pool serves one audience: READ destinations, whose
 * descriptors are never shown, or the bodies sent to one peer node, which may keep a region's key
 * but only ever finds there what is sent to it anyway. Users give a region back only once no READ
 * of it can still be under way, and close it instead when that is unsure (closing revokes the
 * key). Regions come in power-of-two sizes from 64 KiB to 64 MiB; at most {@code maxIdleBytes}
 * wait idle, the rest is freed. Thread safe; owns the idle regions.
 */
final class RegionPool implements AutoCloseable {
  private static final int MIN_SHIFT = 16;
  private static final int MAX_SHIFT = 26;
  /** The idle budget of a pool of READ destinations. */
  static final long DESTINATION_IDLE_BYTES = 64L << 20;

  private final Transport transport;
  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedDeque<RegisteredRegion>[] idle = new ConcurrentLinkedDeque[MAX_SHIFT - MIN_SHIFT + 1];
  private final AtomicLong idleBytes = new AtomicLong();
  private final long maxIdleBytes;
  private volatile boolean closed;

  RegionPool(Transport transport, long maxIdleBytes) {
    this.transport = transport;
    this.maxIdleBytes = maxIdleBytes;
    for (int i = 0; i < idle.length; i++) {
      idle[i] = new ConcurrentLinkedDeque<>();
    }
  }

  /** A region of at least {@code length} bytes; give it back with {@link #release}. */
  RegisteredRegion acquire(int length) throws TransportException {
    int shift = shiftFor(length);
    if (shift > MAX_SHIFT) {
      return transport.allocate(length);
    }
    RegisteredRegion r = idle[shift - MIN_SHIFT].pollFirst();
    if (r != null) {
      idleBytes.addAndGet(-r.length());
      return r;
    }
    return transport.allocate(1 << shift);
  }

  /** Takes a region back from {@link #acquire}; keeps it for reuse or frees it. */
  void release(RegisteredRegion region) {
    int shift = Long.numberOfTrailingZeros(region.length());
    boolean poolable = !closed && Long.bitCount(region.length()) == 1 && shift >= MIN_SHIFT && shift <= MAX_SHIFT
        && region.isOpen();
    if (poolable && idleBytes.addAndGet(region.length()) <= maxIdleBytes) {
      idle[shift - MIN_SHIFT].addFirst(region);
      if (closed && idle[shift - MIN_SHIFT].remove(region)) {
        region.close();
      }
      return;
    }
    if (poolable) {
      idleBytes.addAndGet(-region.length());
    }
    region.close();
  }

  private static int shiftFor(int length) {
    int shift = length <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(length - 1);
    return Math.max(MIN_SHIFT, shift);
  }

  @Override
  public void close() {
    closed = true;
    for (ConcurrentLinkedDeque<RegisteredRegion> q : idle) {
      RegisteredRegion r;
      while ((r = q.pollFirst()) != null) {
        r.close();
      }
    }
  }
}
