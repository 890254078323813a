package org.apache.spark.shuffle.rdma;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * READ destinations reused across this executor's reduce tasks. Registering fresh memory for
 * every range costs more than the READ itself on a fast path (the pages fault in one by one, and
 * a same-host transport creates and maps a file per region), so regions are kept in power-of-two
 * size classes from {@link #MIN_CLASS} bytes, with at most {@code maxIdleBytes} of them idle.
 *
 * <p>A region handed out by {@link #acquire} belongs to the caller until it gives it back with
 * {@link #release}; one whose READ failed should be closed instead, since a late write may still
 * be pending for it. Thread safe. {@link #close} frees the idle regions; regions given back after
 * that are freed at once.
 */
final class DestinationPool implements AutoCloseable {
  static final int MIN_CLASS = 64 * 1024;
  private static final int MAX_CLASS = 1 << 30;

  private final Transport transport;
  private final long maxIdleBytes;
  private final Map<Integer, ArrayDeque<RegisteredRegion>> idle = new HashMap<>(); // guarded by this
  private long idleBytes; // guarded by this
  private int idleCount; // guarded by this
  private boolean closed; // guarded by this

  DestinationPool(Transport transport, long maxIdleBytes) {
    this.transport = transport;
    this.maxIdleBytes = maxIdleBytes;
  }

  /** The size class that holds {@code length} bytes, or the length itself above the largest class. */
  static int sizeClass(int length) {
    if (length <= MIN_CLASS) {
      return MIN_CLASS;
    }
    if (length > MAX_CLASS) {
      return length;
    }
    return Integer.highestOneBit(length - 1) << 1;
  }

  /** A registered region of at least {@code length} bytes; its contents are unspecified. */
  RegisteredRegion acquire(int length) throws TransportException {
    int size = sizeClass(length);
    synchronized (this) {
      ArrayDeque<RegisteredRegion> free = idle.get(size);
      RegisteredRegion r = free == null ? null : free.poll();
      if (r != null) {
        idleBytes -= size;
        idleCount--;
        return r;
      }
    }
    return transport.allocate(size);
  }

  /** Takes a region back for reuse, or frees it when the pool is full or closed. */
  void release(RegisteredRegion region) {
    long size = region.length();
    synchronized (this) {
      if (!closed && region.isOpen() && size <= MAX_CLASS && idleBytes + size <= maxIdleBytes) {
        idle.computeIfAbsent((int) size, s -> new ArrayDeque<>()).push(region);
        idleBytes += size;
        idleCount++;
        return;
      }
    }
    region.close();
  }

  /** Regions waiting for reuse (they count as live registrations of the transport). */
  synchronized int idleCount() {
    return idleCount;
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    Map<Integer, ArrayDeque<RegisteredRegion>> all;
    synchronized (this) {
      all = new HashMap<>(idle);
      idle.clear();
      idleBytes = 0;
      idleCount = 0;
    }
    all.values().forEach(q -> q.forEach(RegisteredRegion::close));
  }
}
