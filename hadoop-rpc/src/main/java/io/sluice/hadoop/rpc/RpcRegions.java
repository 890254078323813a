package io.sluice.hadoop.rpc;

import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegionSizes;
import io.sluice.transport.memory.RegisteredAllocator;

/**
 * How the RPC engine keeps registered memory for reuse: allocating (and zeroing) a fresh direct
 * buffer per large body costs more than the copy it serves. Each pool is an allocator of the
 * endpoint's tree that serves one audience: READ destinations, whose descriptors are never shown,
 * or the bodies sent to one peer node, which may keep a region's key but only ever finds there
 * what is sent to it anyway. Users give a region back with {@link RegisteredAllocator#release}
 * only once no READ of it can still be under way, and {@link RegisteredAllocator#free} it instead
 * when that is unsure (freeing revokes the key). Regions come in power-of-two sizes from 64 KiB
 * to 64 MiB; at most the pool's idle bytes wait idle, the rest is freed. Stateless.
 */
final class RpcRegions {
  /** Power-of-two classes from 64 KiB to 64 MiB; larger bodies get their exact length, never kept. */
  static final RegionSizes SIZES = RegionSizes.powersOfTwo(64 << 10, 64 << 20);
  /** The idle budget of a pool of READ destinations. */
  static final long DESTINATION_IDLE_BYTES = 64L << 20;

  private RpcRegions() {}

  /** A pool of {@code parent}'s tree keeping at most {@code maxIdleBytes} idle. */
  static RegisteredAllocator pool(RegisteredAllocator parent, String name, long maxIdleBytes) {
    return parent.newChild(name, AllocatorOptions.DEFAULTS.withReuse(SIZES, maxIdleBytes));
  }

  /** Like {@link #pool(RegisteredAllocator, String, long)}, with regions only {@code reader} may READ. */
  static RegisteredAllocator poolFor(RegisteredAllocator parent, String name, long maxIdleBytes, long reader) {
    return parent.newChild(name, AllocatorOptions.DEFAULTS.withReuse(SIZES, maxIdleBytes).withReader(reader));
  }
}
