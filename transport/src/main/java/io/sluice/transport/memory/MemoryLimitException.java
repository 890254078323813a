package io.sluice.transport.memory;

/**
 * A {@link RegisteredAllocator} (or one of its ancestors) has no room for a region and the
 * caller did not ask to wait. The message names the allocator whose limit was reached, its use
 * and its limit.
 */
public final class MemoryLimitException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public MemoryLimitException(String message) {
    super(message);
  }
}
