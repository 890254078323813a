package io.sluice.transport.memory;

import io.sluice.transport.Transport;

/**
 * What distinguishes one {@link RegisteredAllocator} of a tree from another: its byte limit (its
 * ancestors' limits bound it too), the peer its regions are registered for ({@link
 * Transport#allocateFor}), how it sizes and reuses regions, and how many bytes of released
 * regions it keeps idle for reuse. Immutable; start from {@link #DEFAULTS} and change what
 * differs.
 *
 * @param limit most bytes the allocator and its children hold at once, idle regions included
 * @param reader the node id of the one peer that may READ its regions, or {@link
 *     Transport#ANY_PEER} or {@link Transport#GRANTED_ONLY}
 * @param sizes how requests are rounded and which idle regions serve them
 * @param maxIdleBytes most bytes of released regions kept for reuse; 0 frees each at release
 */
public record AllocatorOptions(long limit, long reader, RegionSizes sizes, long maxIdleBytes) {
  /** No limit, readable by any authenticated peer, exact sizes, nothing kept idle. */
  public static final AllocatorOptions DEFAULTS =
      new AllocatorOptions(Long.MAX_VALUE, Transport.ANY_PEER, RegionSizes.exact(), 0);

  public AllocatorOptions {
    if (limit <= 0) {
      throw new IllegalArgumentException("an allocator's limit must be positive, got " + limit);
    }
    if (maxIdleBytes < 0) {
      throw new IllegalArgumentException("an allocator's idle bytes must not be negative, got " + maxIdleBytes);
    }
    if (sizes == null) {
      throw new IllegalArgumentException("an allocator needs its region sizes");
    }
  }

  public AllocatorOptions withLimit(long bytes) {
    return new AllocatorOptions(bytes, reader, sizes, maxIdleBytes);
  }

  public AllocatorOptions withReader(long peerNode) {
    return new AllocatorOptions(limit, peerNode, sizes, maxIdleBytes);
  }

  /** Reuse released regions sized by {@code regionSizes}, keeping at most {@code idleBytes} idle. */
  public AllocatorOptions withReuse(RegionSizes regionSizes, long idleBytes) {
    return new AllocatorOptions(limit, reader, regionSizes, idleBytes);
  }
}
