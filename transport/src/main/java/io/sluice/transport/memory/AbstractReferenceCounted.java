package io.sluice.transport.memory;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one reference-count contract of the project: an object starts with one reference, owned by
 * whoever made it; {@link #retain()} and {@link #release()} add and drop references, and {@link
 * #deallocate()} runs exactly once, on the thread whose release drops the last one. A release
 * past zero is a bug of the caller and fails with {@link IllegalStateException}; so does a
 * retain of an object already freed.
 *
 * <p>Thread safe: the count is one atomic integer. Subclasses keep {@link #deallocate()} free of
 * locks that a releasing thread may already hold.
 */
public abstract class AbstractReferenceCounted {
  private final AtomicInteger refCnt = new AtomicInteger(1);

  /** Current reference count; 0 once freed. */
  public int refCnt() {
    return Math.max(0, refCnt.get());
  }

  /** Adds a reference unless the object is already freed; false if it was. */
  public boolean tryRetain() {
    while (true) {
      int n = refCnt.get();
      if (n <= 0) {
        return false;
      }
      if (refCnt.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /**
   * Adds a reference.
   *
   * @throws IllegalStateException if the count already reached zero
   */
  public AbstractReferenceCounted retain() {
    if (!tryRetain()) {
      throw new IllegalStateException("retain of " + this + " after it was freed");
    }
    return this;
  }

  /**
   * Drops a reference and frees the object when none remain.
   *
   * @return true if this call freed it
   * @throws IllegalStateException if the object was already freed
   */
  public boolean release() {
    while (true) {
      int n = refCnt.get();
      if (n <= 0) {
        throw new IllegalStateException("release of " + this + " after it was freed");
      }
      if (refCnt.compareAndSet(n, n - 1)) {
        if (n == 1) {
          deallocate();
          return true;
        }
        return false;
      }
    }
  }

  /** Frees what the object holds; called once, when the last reference is released. */
  protected abstract void deallocate();
}
