package io.sluice.perf.transport;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * The memcpy baseline: one thread copies blocks with {@link ByteBuffer#put(ByteBuffer)} between
 * direct buffers (a native memory copy), cycling over a source as large as the region that READs
 * cycle over, into one destination block. That is the work an shm READ cannot avoid. Not thread
 * safe.
 */
final class MemcpyBaseline {
  private final ByteBuffer source;

  /** A source of {@code regionBytes}, filled so its pages are real memory. */
  MemcpyBaseline(int regionBytes) {
    this.source = ByteBuffer.allocateDirect(regionBytes);
    RegionPattern.fill(source);
  }

  /** Copies {@code block}-sized blocks for {@code warmup}, then measures for {@code measure}; GB/s. */
  double gigabytesPerSecond(int block, Duration warmup, Duration measure) {
    if (block > source.capacity()) {
      throw new IllegalArgumentException("block " + block + " exceeds the source " + source.capacity());
    }
    ByteBuffer destination = ByteBuffer.allocateDirect(block);
    copy(destination, warmup.toNanos());
    long start = System.nanoTime();
    long bytes = copy(destination, measure.toNanos());
    return bytes / (double) (System.nanoTime() - start);
  }

  private long copy(ByteBuffer destination, long nanos) {
    int block = destination.capacity();
    int blocks = source.capacity() / block;
    long deadline = System.nanoTime() + nanos;
    long bytes = 0;
    int i = 0;
    do {
      destination.clear();
      destination.put(source.slice(i * block, block));
      bytes += block;
      i = i + 1 == blocks ? 0 : i + 1;
    } while (System.nanoTime() < deadline);
    return bytes;
  }
}
