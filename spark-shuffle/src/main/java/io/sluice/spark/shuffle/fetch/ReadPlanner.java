package io.sluice.spark.shuffle.fetch;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import java.util.ArrayList;
import java.util.List;

/**
 * How a reducer cuts its fetch into messages and READs: range requests small enough that their
 * answers fit in one message, and, per answered map output, units of contiguous blocks that are
 * each read into one destination. Stateless.
 */
public final class ReadPlanner {
  /** Largest block one destination holds (a region is at most 2 GiB, less a little headroom). */
  public static final long MAX_BLOCK_BYTES = Integer.MAX_VALUE - 64;

  private ReadPlanner() {}

  /** One non-empty block in a unit: partition {@code partition}, {@code length} bytes at {@code offset} of the unit. */
  public record Block(int partition, long offset, long length) {}

  /** Data-file bytes {@code [start, start + length)}, read into one destination; its blocks in partition order. */
  public record Unit(long start, long length, List<Block> blocks) {
    public Unit {
      blocks = List.copyOf(blocks);
    }
  }

  /** A block larger than {@link #MAX_BLOCK_BYTES}; names its partition and size. */
  public static final class BlockTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final int partition;
    private final long length;

    BlockTooLargeException(int partition, long length) {
      super("block of " + length + " bytes exceeds 2 GiB");
      this.partition = partition;
      this.length = length;
    }

    public int partition() {
      return partition;
    }

    public long length() {
      return length;
    }
  }

  /**
   * Splits queries into requests, in order, so that no answer exceeds {@code maxResponseBytes};
   * a single query whose answer is larger still gets a request of its own.
   */
  public static List<List<RangeProtocol.Query>> requests(List<RangeProtocol.Query> queries, long maxResponseBytes) {
    List<List<RangeProtocol.Query>> batches = new ArrayList<>();
    List<RangeProtocol.Query> batch = new ArrayList<>();
    for (RangeProtocol.Query q : queries) {
      batch.add(q);
      if (batch.size() > 1 && RangeProtocol.responseBytes(batch) > maxResponseBytes) {
        batch.remove(batch.size() - 1);
        batches.add(batch);
        batch = new ArrayList<>(List.of(q));
      }
    }
    batches.add(batch);
    return batches;
  }

  /**
   * The units that read an answered map output: consecutive non-empty blocks, cut at block
   * boundaries so that a unit spans at most {@code maxRangeBytes} (a single larger block is a
   * unit of its own). Empty blocks are not read.
   *
   * @param startPartition the partition the answer's first block belongs to
   * @throws BlockTooLargeException for a block larger than {@link #MAX_BLOCK_BYTES}
   */
  public static List<Unit> units(RangeProtocol.Answer answer, int startPartition, long maxRangeBytes) {
    List<Unit> units = new ArrayList<>();
    List<Block> blocks = new ArrayList<>();
    long unitStart = -1;
    long unitEnd = -1;
    for (int p = 0; p < answer.offsets().length - 1; p++) {
      long len = answer.length(p);
      if (len == 0) {
        continue;
      }
      if (len > MAX_BLOCK_BYTES) {
        throw new BlockTooLargeException(startPartition + p, len);
      }
      if (unitStart >= 0 && answer.start(p) + len - unitStart > maxRangeBytes) {
        units.add(new Unit(unitStart, unitEnd - unitStart, blocks));
        blocks = new ArrayList<>();
        unitStart = -1;
      }
      if (unitStart < 0) {
        unitStart = answer.start(p);
      }
      blocks.add(new Block(startPartition + p, answer.start(p) - unitStart, len));
      unitEnd = answer.start(p) + len;
    }
    if (!blocks.isEmpty()) {
      units.add(new Unit(unitStart, unitEnd - unitStart, blocks));
    }
    return units;
  }
}
