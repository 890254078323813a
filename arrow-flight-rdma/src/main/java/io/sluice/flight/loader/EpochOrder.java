package io.sluice.flight.loader;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The order in which an epoch visits a table's shards, and which of them each rank reads. The
 * order is a permutation of the shard indices drawn from (seed, epoch) alone, so it is the same in
 * every run and for any number of readers; rank {@code r} of {@code world} reads the positions
 * {@code r, r + world, r + 2 world, ...} of it. Every shard is therefore read exactly once per
 * epoch by exactly one rank, and the ranks' counts differ by at most one. Stateless.
 */
public final class EpochOrder {
  private EpochOrder() {}

  /** The permutation of {@code 0..shards-1} epoch {@code epoch} visits. */
  public static int[] permutation(int shards, long seed, int epoch) {
    if (shards < 0 || epoch < 0) {
      throw new IllegalArgumentException("shards and epoch are >= 0, got " + shards + " and " + epoch);
    }
    int[] order = new int[shards];
    for (int i = 0; i < shards; i++) {
      order[i] = i;
    }
    // One stream per (seed, epoch): mixing the epoch through the golden-ratio increment keeps
    // neighbouring epochs' streams unrelated.
    SplittableRandom random = new SplittableRandom(seed ^ (0x9e3779b97f4a7c15L * (epoch + 1L)));
    for (int i = shards - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    return order;
  }

  /** The shard indices rank {@code rank} of {@code world} reads in epoch {@code epoch}, in order. */
  public static List<Integer> forRank(int shards, long seed, int epoch, int rank, int world) {
    checkRank(rank, world);
    int[] order = permutation(shards, seed, epoch);
    List<Integer> mine = new ArrayList<>();
    for (int p = rank; p < order.length; p += world) {
      mine.add(order[p]);
    }
    return mine;
  }

  static void checkRank(int rank, int world) {
    if (world < 1 || rank < 0 || rank >= world) {
      throw new IllegalArgumentException("rank must be in [0, world size) and the world size >= 1, got rank "
          + rank + " of " + world);
    }
  }
}
