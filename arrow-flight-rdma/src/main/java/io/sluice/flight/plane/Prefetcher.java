package io.sluice.flight.plane;

import io.sluice.flight.memory.LandingPool;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.transport.Connection;
import io.sluice.transport.TransportException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads a data-plane stream's body frames ahead on a thread of its own and starts each body's
 * READ as soon as its frame arrives, at most {@code depth} bodies ahead of the consumer, so that
 * moving batch k+1 overlaps the consumer's work on batch k. The consumer takes the results in
 * order with {@link #take}; acknowledging stays the consumer's job (it knows when a body is
 * READ and loaded).
 *
 * <p>Thread safe between its own thread and one consumer. {@link #close()} stops the thread
 * (the caller cancels the call first, which wakes a blocked receive) and gives back the landing
 * memory of bodies never taken, each once its READ has finished.
 */
final class Prefetcher implements AutoCloseable {
  /** What the consumer takes: a body being READ, the end of the stream, or a failure. */
  sealed interface Item permits Fetched, End, Failed {}

  /** A body frame whose READ into {@code landing} (empty for a body of 0 bytes) is under way. */
  record Fetched(BodyFrame frame, Optional<LandingPool.Landing> landing, CompletableFuture<Void> read) implements Item {}

  record End() implements Item {}

  record Failed(RuntimeException error) implements Item {}

  private final FrameLink link;
  private final Connection connection;
  private final LandingPool landing;
  private final int chunkBytes;
  private final long timeoutNanos;
  private final BlockingQueue<Item> queue;
  private final Thread thread;
  private volatile boolean closed;

  Prefetcher(FrameLink link, Connection connection, LandingPool landing, int chunkBytes, int depth,
      long timeoutNanos) {
    this.link = link;
    this.connection = connection;
    this.landing = landing;
    this.chunkBytes = chunkBytes;
    this.timeoutNanos = timeoutNanos;
    this.queue = new ArrayBlockingQueue<>(Math.max(1, depth));
    this.thread = new Thread(this::run, "sluice-flight-prefetch");
    thread.setDaemon(true);
    thread.start();
  }

  /** The next item, in stream order. @throws TimeoutException if none came within the deadline */
  Item take(long deadlineNanos) throws TimeoutException, InterruptedException {
    Item i = queue.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    if (i == null) {
      throw new TimeoutException("no data-plane frame within " + timeoutNanos / 1_000_000 + " ms");
    }
    return i;
  }

  private void run() {
    Item last;
    try {
      while (true) {
        Optional<ByteBuffer> raw = link.receive();
        if (raw.isEmpty()) {
          last = new End();
          break;
        }
        if (!(DataPlaneProtocol.decodeFrame(raw.get()) instanceof BodyFrame f)) {
          last = new Failed(new IllegalArgumentException("a data-plane stream carried a second schema or an acknowledgement"));
          break;
        }
        Fetched fetched = start(f);
        if (!offer(fetched)) {
          giveBack(fetched);
          return;
        }
      }
    } catch (RuntimeException e) {
      last = new Failed(e);
    }
    offer(last);
  }

  /** Queues an item unless closed; false when closed first. */
  private boolean offer(Item item) {
    try {
      while (!closed) {
        if (queue.offer(item, 50, TimeUnit.MILLISECONDS)) {
          return true;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  private Fetched start(BodyFrame f) {
    long length = f.body().length();
    if (length == 0) {
      return new Fetched(f, Optional.empty(), CompletableFuture.completedFuture(null));
    }
    LandingPool.Landing dst;
    try {
      dst = landing.acquire(length);
    } catch (TransportException e) {
      return new Fetched(f, Optional.empty(), CompletableFuture.failedFuture(e));
    }
    CompletableFuture<Void> read = BodyReads.start(connection, f.body(), dst.region(), 0, chunkBytes);
    return new Fetched(f, Optional.of(dst), read);
  }

  /** Gives a body's landing memory back once its READ has finished (within the deadline). */
  void giveBack(Fetched f) {
    if (f.landing().isEmpty()) {
      return;
    }
    try {
      f.read().get(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (Exception e) {
      // finished with an error, or not within the deadline: the transport writes a destination
      // only before the READ's future completes normally, so the memory is safe to reuse either way
    }
    f.landing().get().release();
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Item i; (i = queue.poll()) != null; ) {
      if (i instanceof Fetched f) {
        giveBack(f);
      }
    }
  }
}
