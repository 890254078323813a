package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvMr;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Direct memory registered in one {@link ProtectionDomain}, for local use or for READs by
 * that domain's peer. Closing deregisters it: from then on the device refuses READs of its
 * key (peers see {@link io.sluice.transport.RegionRevokedException}) and the region's
 * reference to its domain is given back. The caller keeps the buffer alive while the region
 * is open. Thread safe.
 */
public final class RdmaRegion implements AutoCloseable {

  private final IbvMr mr;
  private final ByteBuffer buffer;
  private final Runnable deregistered;
  private final AtomicBoolean open = new AtomicBoolean(true);

  RdmaRegion(IbvMr mr, ByteBuffer buffer, Runnable deregistered) {
    this.mr = mr;
    this.buffer = buffer;
    this.deregistered = deregistered;
  }

  /** The registered virtual address of the first byte. */
  public long address() {
    return mr.getAddr();
  }

  public int length() {
    return mr.getLength();
  }

  /** The key peers present to READ this region. */
  public int rkey() {
    return mr.getRkey();
  }

  /** The key local work requests use for this region. */
  public int lkey() {
    return mr.getLkey();
  }

  /** The registered memory (shared contents, independent position and limit). */
  public ByteBuffer buffer() {
    return buffer.duplicate();
  }

  public boolean isOpen() {
    return open.get();
  }

  /**
   * Deregisters the memory. Idempotent. If the device refuses, the memory region stays (and
   * keeps its domain): the error says so, and the buffer must then stay alive.
   */
  @Override
  public void close() {
    if (open.compareAndSet(true, false)) {
      try {
        mr.deregMr().execute().free();
      } catch (IOException e) {
        throw new UncheckedIOException("ibv_dereg_mr failed; the memory stays registered", e);
      }
      deregistered.run();
    }
  }
}
