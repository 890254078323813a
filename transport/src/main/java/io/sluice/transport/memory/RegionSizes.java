package io.sluice.transport.memory;

/**
 * How a {@link RegisteredAllocator} sizes the regions it registers and which idle ones it hands
 * out again: rounding requests up to a few sizes lets a region released by one user serve the
 * next, and registering fresh memory per request costs more than the request itself on a fast
 * path (the pages fault in one by one; a same-host transport creates and maps a file per region).
 * Implementations are stateless.
 */
public interface RegionSizes {
  /** How many bytes to register for a request of {@code length} bytes (at least {@code length}). */
  long regionSize(long length);

  /** The largest idle region worth handing out for a request of {@code length} bytes. */
  default long largestReused(long length) {
    return regionSize(length);
  }

  /** Whether a region of {@code size} bytes may wait idle for reuse at all. */
  default boolean keeps(long size) {
    return true;
  }

  /** Exactly the bytes asked for (at least one), each region reused only for its own size. */
  static RegionSizes exact() {
    return length -> Math.max(1, length);
  }

  /**
   * Powers of two from {@code smallest} to {@code largest} bytes, each reused for its own class
   * only; a request above {@code largest} gets exactly its length and is freed when released.
   */
  static RegionSizes powersOfTwo(long smallest, long largest) {
    if (Long.bitCount(smallest) != 1 || Long.bitCount(largest) != 1 || smallest > largest) {
      throw new IllegalArgumentException("size classes need powers of two smallest <= largest, got "
          + smallest + " and " + largest);
    }
    return new RegionSizes() {
      @Override
      public long regionSize(long length) {
        if (length <= smallest) {
          return smallest;
        }
        if (length > largest) {
          return length;
        }
        return Long.highestOneBit(length - 1) << 1;
      }

      @Override
      public boolean keeps(long size) {
        return size <= largest;
      }
    };
  }
}
