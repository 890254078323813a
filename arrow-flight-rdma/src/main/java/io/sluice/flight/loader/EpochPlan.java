package io.sluice.flight.loader;

import java.util.List;
import java.util.NoSuchElementException;

/**
 * The sequence of steps one rank takes from a cursor on: each of its shards of an epoch in
 * {@link EpochOrder}, then that epoch's end, then the next epoch, up to a number of epochs. Not
 * thread safe: the loader's consuming thread drives it.
 */
final class EpochPlan {
  /** One step: a shard to read at a cursor, or (shard -1) the end of the cursor's epoch. */
  record Step(Cursor cursor, int shard) {
    boolean isEpochEnd() {
      return shard < 0;
    }
  }

  private final int shards;
  private final long seed;
  private final int rank;
  private final int world;
  private final int epochs;
  private Cursor next;
  private List<Integer> mine;

  EpochPlan(int shards, long seed, int rank, int world, int epochs, Cursor from) {
    EpochOrder.checkRank(rank, world);
    this.shards = shards;
    this.seed = seed;
    this.rank = rank;
    this.world = world;
    this.epochs = epochs;
    this.next = from;
    if (from.epoch() < epochs) {
      mine = EpochOrder.forRank(shards, seed, from.epoch(), rank, world);
      if (from.position() > mine.size()) {
        throw new IllegalArgumentException("cursor " + from + " is past the " + mine.size() + " shards rank " + rank
            + " of " + world + " reads in epoch " + from.epoch());
      }
    }
  }

  boolean hasNext() {
    return next.epoch() < epochs;
  }

  Step next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the plan ends after epoch " + (epochs - 1));
    }
    Cursor at = next;
    if (at.position() < mine.size()) {
      next = at.advance();
      return new Step(at, mine.get(at.position()));
    }
    next = at.nextEpoch();
    if (next.epoch() < epochs) {
      mine = EpochOrder.forRank(shards, seed, next.epoch(), rank, world);
    }
    return new Step(at, -1);
  }
}
