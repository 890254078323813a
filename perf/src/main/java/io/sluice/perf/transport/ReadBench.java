package io.sluice.perf.transport;

import io.sluice.transport.Connection;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Measures one-sided READs over one {@link Connection}: throughput with a fixed number of READs in
 * flight, and the latency of READs issued one at a time. READs cycle over the whole remote region
 * so the source is not all in cache, and land in consecutive blocks of one local registered
 * destination. Each cell first checks all data of one READ against {@link RegionPattern}.
 *
 * <p>Not thread safe: one cell at a time, driven from the calling thread.
 */
final class ReadBench {
  private final Connection connection;
  private final RemoteDescriptor remote;
  private final RegisteredRegion local;
  private final Duration readTimeout;

  ReadBench(Connection connection, RemoteDescriptor remote, RegisteredRegion local, Duration readTimeout) {
    this.connection = connection;
    this.remote = remote;
    this.local = local;
    this.readTimeout = readTimeout;
  }

  /** Runs {@code warmup}, then {@code measure}, keeping {@code depth} READs of {@code block} in flight; GB/s. */
  double throughput(int block, int depth, Duration warmup, Duration measure) throws IOException {
    if ((long) block * depth > local.length()) {
      throw new IllegalArgumentException(
          "destination of " + local.length() + " bytes cannot hold " + depth + " blocks of " + block);
    }
    if (block > remote.length()) {
      throw new IllegalArgumentException("block " + block + " exceeds the remote region " + remote.length());
    }
    verify(block);
    Pipeline warm = new Pipeline(block, depth);
    warm.run(warmup.toNanos());
    Pipeline timed = new Pipeline(block, depth);
    long start = System.nanoTime();
    long bytes = timed.run(measure.toNanos());
    return bytes / (double) (System.nanoTime() - start);
  }

  /**
   * READs of {@code size} bytes one at a time: adds to {@code samples} the nanoseconds from issue
   * to completion of each, until {@code measure} has passed or the samples are full.
   */
  void latency(int size, Duration warmup, Duration measure, LatencySamples samples) throws IOException {
    verify(size);
    long blocks = remote.length() / size;
    long seq = 0;
    long warmEnd = System.nanoTime() + warmup.toNanos();
    while (System.nanoTime() < warmEnd) {
      await(connection.read(remote, (seq++ % blocks) * size, local, 0, size));
    }
    long deadline = System.nanoTime() + measure.toNanos();
    while (System.nanoTime() < deadline && !samples.isFull()) {
      long offset = (seq++ % blocks) * size;
      long t0 = System.nanoTime();
      CompletableFuture<Void> f = connection.read(remote, offset, local, 0, size);
      await(f);
      samples.add(System.nanoTime() - t0);
    }
  }

  /** One READ from the middle of the region, checked long by long. */
  private void verify(int size) throws IOException {
    long offset = (remote.length() / 2 - size / 2) & ~7L;
    offset = Math.max(0, Math.min(offset, (remote.length() - size) & ~7L));
    await(connection.read(remote, offset, local, 0, size));
    RegionPattern.check(local.buffer(), 0, offset, size);
  }

  private void await(CompletableFuture<Void> f) throws IOException {
    Await.get(f, readTimeout, "READ over " + connection.dataPath());
  }

  /** Keeps {@code depth} READs outstanding, each slot reusing its own destination block. */
  private final class Pipeline {
    private final int block;
    private final long blocksInRegion;
    private final CompletableFuture<Void>[] slots;
    private long seq;

    @SuppressWarnings("unchecked")
    Pipeline(int block, int depth) {
      this.block = block;
      this.blocksInRegion = remote.length() / block;
      this.slots = (CompletableFuture<Void>[]) new CompletableFuture<?>[depth];
    }

    /** Issues and completes READs until {@code nanos} have passed, then drains; returns bytes read. */
    long run(long nanos) throws IOException {
      long deadline = System.nanoTime() + nanos;
      for (int i = 0; i < slots.length; i++) {
        slots[i] = issue(i);
      }
      long bytes = 0;
      for (int i = 0; ; i = (i + 1) % slots.length) {
        await(slots[i]);
        bytes += block;
        if (System.nanoTime() >= deadline) {
          for (int k = 1; k < slots.length; k++) {
            await(slots[(i + k) % slots.length]);
            bytes += block;
          }
          return bytes;
        }
        slots[i] = issue(i);
      }
    }

    private CompletableFuture<Void> issue(int slot) {
      long remoteOffset = (seq++ % blocksInRegion) * block;
      return connection.read(remote, remoteOffset, local, (long) slot * block, block);
    }
  }
}
