package io.sluice.hadoop.rpc;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Registered memory that READs land in, kept for reuse: allocating (and zeroing) a fresh
 * direct buffer per large body costs more than the copy it serves. Only destinations are pooled:
 * their descriptors are never shown to a peer. Memory that peers READ is always fresh, so no peer
 * can READ what another call put there later. Regions come in power-of-two sizes from 64 KiB to
 * 64 MiB; at most 64 MiB waits idle, the rest is freed. Thread safe; owns the idle regions.
 */
final class LandingRegions implements AutoCloseable {
  private static final int MIN_SHIFT = 16;
  private static final int MAX_SHIFT = 26;
  private static final long MAX_IDLE_BYTES = 64L << 20;

  private final Transport transport;
  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedDeque<RegisteredRegion>[] idle = new ConcurrentLinkedDeque[MAX_SHIFT - MIN_SHIFT + 1];
  private final AtomicLong idleBytes = new AtomicLong();
  private volatile boolean closed;

  LandingRegions(Transport transport) {
    this.transport = transport;
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
    if (poolable && idleBytes.addAndGet(region.length()) <= MAX_IDLE_BYTES) {
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
