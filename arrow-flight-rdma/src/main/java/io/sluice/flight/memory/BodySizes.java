package io.sluice.flight.memory;

import io.sluice.transport.memory.RegionSizes;

/**
 * Region sizes for batch bodies: powers of two from 64 KiB up to 8 MiB (so regions are reused
 * across batch sizes), then whole MiB. Stateless.
 */
final class BodySizes implements RegionSizes {
  /** Landing memory: an idle region serves a body whose size class is at least half its size. */
  static final BodySizes LANDING = new BodySizes(2);
  /** Staging memory: the smallest idle region that holds the body serves it. */
  static final BodySizes STAGING = new BodySizes(Long.MAX_VALUE);

  private static final int MIN_REGION = 64 << 10;
  private static final long MB = 1 << 20;

  private final long reuseFactor;

  private BodySizes(long reuseFactor) {
    this.reuseFactor = reuseFactor;
  }

  @Override
  public long regionSize(long length) {
    if (length <= MIN_REGION) {
      return MIN_REGION;
    }
    if (length <= 8 * MB) {
      return Long.highestOneBit(length - 1) << 1;
    }
    return Math.min(Integer.MAX_VALUE, (length + MB - 1) / MB * MB);
  }

  @Override
  public long largestReused(long length) {
    long size = regionSize(length);
    return size > Long.MAX_VALUE / reuseFactor ? Long.MAX_VALUE : size * reuseFactor;
  }
}
