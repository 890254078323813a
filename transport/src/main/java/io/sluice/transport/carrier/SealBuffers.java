package io.sluice.transport.carrier;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Direct buffers that encrypted connections seal their records into, shared by every connection
 * of the process: a connection takes one when it has frames to seal and gives it back once all it
 * queued is written. Up to {@code retained} idle buffers are kept for the next writer; the rest
 * are left to the garbage collector. Memory therefore follows the connections writing at a
 * moment, not the connections open. Thread safe.
 */
final class SealBuffers {
  private final int capacity;
  private final int retained;
  private final ConcurrentLinkedQueue<ByteBuffer> idle = new ConcurrentLinkedQueue<>();
  private final AtomicInteger idleCount = new AtomicInteger();

  SealBuffers(int capacity, int retained) {
    this.capacity = capacity;
    this.retained = retained;
  }

  /** A cleared buffer of {@link #capacity} bytes, idle or new. */
  ByteBuffer take() {
    ByteBuffer b = idle.poll();
    if (b == null) {
      return ByteBuffer.allocateDirect(capacity);
    }
    idleCount.decrementAndGet();
    return b.clear();
  }

  /** Returns a buffer that its connection no longer uses (it must not touch it again). */
  void give(ByteBuffer b) {
    if (b.capacity() != capacity) {
      throw new IllegalArgumentException("a buffer of " + b.capacity() + " bytes, not one of these " + capacity);
    }
    if (idleCount.incrementAndGet() <= retained) {
      idle.add(b);
    } else {
      idleCount.decrementAndGet();
    }
  }

  /** Buffers kept for the next writer. */
  int idleCount() {
    return idleCount.get();
  }
}
