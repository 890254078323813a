package io.sluice.flight.memory;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegisteredAllocator;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Registered memory that READs land in, handed to Arrow as {@link ArrowBuf}s without a copy:
 * {@link #acquire} gives a region of at least the asked size; {@link Landing#wrap} turns it into
 * an ArrowBuf of the caller's allocator (the allocator accounts for it, so its leak checks see
 * it), and when Arrow releases the last reference the region comes back here for the next body.
 * The regions come from a child of the session's {@link RegisteredAllocator}, registered for no
 * peer (landing memory is only ever a local READ destination), sized by {@link BodySizes} and
 * reused for bodies up to twice smaller; idle memory beyond {@code maxIdleBytes} is freed.
 *
 * <p>Thread safe. A region in use keeps one reference of its own, so closing the pool or the
 * transport never frees memory that a vector still points into; such a region is freed when
 * Arrow releases it.
 */
public final class LandingPool implements AutoCloseable {
  private final RegisteredAllocator memory;

  public LandingPool(RegisteredAllocator parent, long maxIdleBytes) {
    this.memory = parent.newChild("landing", AllocatorOptions.DEFAULTS.withReader(Transport.GRANTED_ONLY)
        .withReuse(BodySizes.LANDING, maxIdleBytes));
  }

  /**
   * Registered memory for a body of {@code length} bytes.
   *
   * @throws IllegalStateException if the pool is closed
   */
  public Landing acquire(long length) throws TransportException {
    if (length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("a batch body of " + length + " bytes is over the 2 GiB a region can hold");
    }
    return new Landing(memory.allocate(length));
  }

  /** Regions kept for the next body. */
  public int idleCount() {
    return memory.idleCount();
  }

  @Override
  public void close() {
    memory.shutdown();
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
        return RegionBuffers.wrap(region, length, allocator, () -> memory.release(region));
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
        memory.release(region);
      }
    }
  }
}
