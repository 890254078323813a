package io.sluice.flight.plane;

import io.sluice.transport.RemoteView;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ForeignAllocation;
import org.apache.arrow.memory.util.MemoryUtil;

/**
 * The views of one stream's bodies that Arrow buffers still hold: {@link #wrap} hands a {@link
 * RemoteView} of the server's memory to the caller's allocator as an {@link ArrowBuf} (the
 * allocator accounts for its bytes; no copy), and the view closes when Arrow releases the buffer.
 * The server keeps the stream's table and grant until told the reader is done, so the actions
 * given to {@link #afterViews} (ending the call) run only once no view is held, which may be
 * long after the stream ended when the application keeps a batch's vectors.
 *
 * <p>Thread safe: buffers are released on any thread.
 */
public final class ViewLease {
  private final List<Runnable> whenIdle = new ArrayList<>();
  private int held;

  /** {@code length} bytes of {@code view} as a buffer of {@code allocator}; ownership of the view moves to it. */
  ArrowBuf wrap(RemoteView view, long length, BufferAllocator allocator) {
    long address = MemoryUtil.getByteBufferAddress(view.buffer());
    synchronized (this) {
      held++;
    }
    try {
      return allocator.wrapForeignAllocation(new ForeignAllocation(length, address) {
        @Override
        protected void release0() {
          view.close();
          released();
        }
      });
    } catch (RuntimeException e) {
      view.close();
      released();
      throw e;
    }
  }

  /** Views held now. */
  public synchronized int held() {
    return held;
  }

  /** Runs {@code action} now if no view is held, else on the thread that releases the last one. */
  public void afterViews(Runnable action) {
    synchronized (this) {
      if (held > 0) {
        whenIdle.add(action);
        return;
      }
    }
    action.run();
  }

  private void released() {
    List<Runnable> run;
    synchronized (this) {
      if (--held > 0 || whenIdle.isEmpty()) {
        return;
      }
      run = new ArrayList<>(whenIdle);
      whenIdle.clear();
    }
    run.forEach(Runnable::run);
  }
}
