package io.sluice.flight.memory;

import io.sluice.transport.RegisteredRegion;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;

/** Registered memory handed to Arrow without a copy. Stateless. */
public final class RegionBuffers {
  private RegionBuffers() {}

  /**
   * The first {@code length} bytes of {@code region} as an ArrowBuf of {@code allocator}, which
   * accounts for them. The buffer holds a reference of its own to the region, so the memory
   * outlives the region's revocation (or its transport's close) while Arrow uses it; when Arrow
   * releases the buffer, that reference is dropped and then {@code afterRelease} runs.
   */
  public static ArrowBuf wrap(RegisteredRegion region, long length, BufferAllocator allocator,
      Runnable afterRelease) {
    if (length > region.length()) {
      throw new IllegalArgumentException(length + " bytes wanted of a region of " + region.length());
    }
    region.retain();
    long address = MemoryUtil.getByteBufferAddress(region.buffer());
    try {
      return allocator.wrapForeignAllocation(new ForeignAllocation(length, address) {
        @Override
        protected void release0() {
          region.release();
          afterRelease.run();
        }
      });
    } catch (RuntimeException e) {
      region.release();
      throw e;
    }
  }
}
