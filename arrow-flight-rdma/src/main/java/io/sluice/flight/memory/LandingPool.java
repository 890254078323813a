package io.sluice.flight.memory;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Registered memory that READs land in, handed to Arrow as {@link ArrowBuf}s without a copy:
 * {@link #acquire} gives a region of at least the asked size; {@link Landing#wrap} turns it into
 * an ArrowBuf of the caller's allocator (the allocator accounts for it, so its leak checks see
 * it), and when Arrow releases the last reference the region comes back here for the next body.
 * Regions are kept by size class; idle memory beyond {@code maxIdleBytes} is freed.
 *
 * <p>Thread safe. A region in use keeps one reference of its own, so closing the pool or the
 * transport never frees memory that a vector still points into.
 */
public final class LandingPool implements AutoCloseable {
  private final Transport transport;
  private final long maxIdleBytes;
  private final TreeMap<Long, Deque<RegisteredRegion>> idle = new TreeMap<>();
  private long idleBytes;
  private boolean closed;

  public LandingPool(Transport transport, long maxIdleBytes) {
    this.transport = transport;
    this.maxIdleBytes = maxIdleBytes;
  }

  /** Registered memory for a body of {@code length} bytes. */
  public Landing acquire(long length) throws TransportException {
    if (length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
    }
    long size = Staging.regionSize(length);
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("landing pool closed");
      }
      Map.Entry<Long, Deque<RegisteredRegion>> e = idle.ceilingEntry(size);
      if (e != null && e.getKey() <= 2 * size) {
        RegisteredRegion r = e.getValue().pollFirst();
        if (e.getValue().isEmpty()) {
          idle.remove(e.getKey());
        }
        idleBytes -= r.length();
        return new Landing(r);
      }
    }
    // Landing memory is only ever a local READ destination: no peer may READ it.
    return new Landing(transport.allocateFor(Transport.GRANTED_ONLY, (int) size));
  }

  private void giveBack(RegisteredRegion r) {
    synchronized (this) {
      if (!closed && r.isOpen() && idleBytes + r.length() <= maxIdleBytes) {
        idle.computeIfAbsent(r.length(), k -> new ArrayDeque<>()).addLast(r);
        idleBytes += r.length();
        return;
      }
    }
    r.close();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      idle.values().forEach(q -> q.forEach(RegisteredRegion::close));
      idle.clear();
      idleBytes = 0;
    }
  }

  /** One region taken from the pool; goes back through {@link #release} or its ArrowBuf. */
  public final class Landing {
    private final RegisteredRegion region;
    private boolean handedOff;

    private Landing(RegisteredRegion region) {
      this.region = region;
    }

    public RegisteredRegion region() {
      return region;
    }

    /**
     * The first {@code length} bytes as an ArrowBuf of {@code allocator}; ownership moves to the
     * buffer, whose last release gives the region back to the pool.
     */
    public ArrowBuf wrap(BufferAllocator allocator, long length) {
      handedOff = true;
      try {
        return RegionBuffers.wrap(region, length, allocator, () -> giveBack(region));
      } catch (RuntimeException e) {
        handedOff = false;
        release();
        throw e;
      }
    }

    /** Gives the region back unused (a failed READ). */
    public void release() {
      if (!handedOff) {
        handedOff = true;
        giveBack(region);
      }
    }
  }
}
