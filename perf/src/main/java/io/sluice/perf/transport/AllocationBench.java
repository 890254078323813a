package io.sluice.perf.transport;

import io.sluice.transport.TransportException;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.shm.ShmArena;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Set;

/**
 * What an shm region costs to allocate and fill once, as a writer does before peers READ it, then
 * free: through a real {@link ShmArena} (every page reserved at allocation) and, as the baseline
 * in the same run, a sparse file of the same size in the same folder (created, truncated to size
 * and mapped: its pages come on first touch, when a full folder can only fault). Throughput is
 * bytes allocated and filled per second. Owns its arena and scratch folder; not thread safe.
 */
final class AllocationBench implements AutoCloseable {
  private final ShmArena arena;
  private final Path sparseDir;
  private long nextSparse;

  AllocationBench(Path shmDir) throws TransportException, IOException {
    this.arena = ShmArena.open(shmDir, System.nanoTime());
    this.sparseDir = Files.createTempDirectory(shmDir, "sluice-bench-sparse-");
  }

  /** Allocates, fills and frees {@code block}-sized arena regions; GB/s. */
  double reservedGigabytesPerSecond(int block, Duration warmup, Duration measure) throws IOException {
    return loop(block, warmup, measure, source -> {
      ShmArena.Allocation a = arena.allocate(block);
      fill(a.buffer(), source);
      arena.discard(a);
    });
  }

  /** Allocates, fills and frees {@code block}-sized sparse files; GB/s. */
  double sparseGigabytesPerSecond(int block, Duration warmup, Duration measure) throws IOException {
    return loop(block, warmup, measure, source -> {
      Path file = sparseDir.resolve("region-" + nextSparse++);
      MappedByteBuffer mapped;
      try (FileChannel ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
          StandardOpenOption.WRITE))) {
        ch.truncate(block);
        ch.write(ByteBuffer.allocate(1), block - 1L);
        mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, block);
      }
      fill(mapped, source);
      Files.delete(file);
    });
  }

  private interface Step {
    void run(ByteBuffer source) throws IOException;
  }

  private static double loop(int block, Duration warmup, Duration measure, Step step) throws IOException {
    ByteBuffer source = ByteBuffer.allocateDirect(block);
    RegionPattern.fill(source);
    long deadline = System.nanoTime() + warmup.toNanos();
    do {
      step.run(source);
    } while (System.nanoTime() < deadline);
    long start = System.nanoTime();
    deadline = start + measure.toNanos();
    long bytes = 0;
    do {
      step.run(source);
      bytes += block;
    } while (System.nanoTime() < deadline);
    return bytes / (double) (System.nanoTime() - start);
  }

  /** Fills the mapping and unmaps it. */
  private static void fill(MappedByteBuffer mapped, ByteBuffer source) {
    mapped.put(source.duplicate().clear());
    DirectMemory.free(mapped);
  }

  @Override
  public void close() throws IOException {
    arena.close();
    Files.deleteIfExists(sparseDir);
  }
}
