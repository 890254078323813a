package io.sluice.flight.server;

import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.Announcement;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/**
 * One data-plane get being served: the bodies of its table in stream order, how many its reader
 * has been told of and how many it has acknowledged. The reader pulls announcements over its
 * authenticated transport connection ({@link #pull}); at most {@code windowBytes} of body bytes
 * (and at least one body) are announced and not yet acknowledged at a time. The serving gRPC
 * call waits in {@link #awaitDone} until every body is acknowledged, the stream is cancelled, or
 * the reader stays silent for the acknowledgement deadline, or the reader stops early.
 *
 * <p>Thread safe: pulls arrive on the transport's handler threads, the wait runs on the call's
 * thread, cancellation comes from gRPC.
 */
final class ServedGet {
  /** Largest announcement reply, well under the transport's message bound. */
  static final int MAX_ANNOUNCEMENT_BYTES = 1 << 20;

  private final long peer;
  private final List<BodyFrame> bodies;
  private final long windowBytes;
  private final long timeoutNanos;
  private int announced;
  private long consumed;
  private long unacknowledgedBytes;
  private long lastHeard;
  private boolean stopped;
  private Throwable cancelled;

  ServedGet(long peer, List<BodyFrame> bodies, long windowBytes, long timeoutNanos) {
    this.peer = peer;
    this.bodies = List.copyOf(bodies);
    this.windowBytes = windowBytes;
    this.timeoutNanos = timeoutNanos;
    this.lastHeard = System.nanoTime();
  }

  long peer() {
    return peer;
  }

  /**
   * Takes the reader's acknowledgement and returns the next announcements.
   *
   * @throws IllegalArgumentException if the reader acknowledges bodies it was never told of
   * @throws IllegalStateException if the stream was cancelled or has timed out
   */
  synchronized Announcement pull(long acknowledged, int maxBodies, boolean stop) {
    if (cancelled != null) {
      throw new IllegalStateException("the stream has ended: " + cancelled.getMessage());
    }
    if (acknowledged > announced) {
      throw new IllegalArgumentException("acknowledgement of " + acknowledged + " bodies, " + announced + " announced");
    }
    lastHeard = System.nanoTime();
    for (; consumed < acknowledged; consumed++) {
      unacknowledgedBytes -= bodies.get((int) consumed).body().length();
    }
    if (stop) {
      stopped = true;
      notifyAll();
      return new Announcement(true, List.of());
    }
    List<BodyFrame> next = new ArrayList<>();
    int bytes = DataPlaneProtocol.encodedLength(List.of());
    while (announced < bodies.size() && next.size() < maxBodies) {
      BodyFrame f = bodies.get(announced);
      int frameBytes = DataPlaneProtocol.encodedLength(List.of(f)) - DataPlaneProtocol.encodedLength(List.of());
      boolean empty = next.isEmpty() && unacknowledgedBytes == 0;
      boolean full = unacknowledgedBytes + f.body().length() > windowBytes || bytes + frameBytes > MAX_ANNOUNCEMENT_BYTES;
      if (!empty && full) {
        break;
      }
      next.add(f);
      bytes += frameBytes;
      unacknowledgedBytes += f.body().length();
      announced++;
    }
    notifyAll();
    return new Announcement(announced == bodies.size(), next);
  }

  /** Ends the stream with {@code cause}: later pulls fail and the wait returns at once. */
  synchronized void cancel(Throwable cause) {
    if (cancelled == null) {
      cancelled = cause;
    }
    notifyAll();
  }

  /**
   * Waits until the reader has acknowledged every body, or stopped early.
   *
   * @throws TimeoutException if the reader was silent for the acknowledgement deadline
   * @throws CancellationException if the stream was cancelled
   */
  synchronized void awaitDone() throws TimeoutException, InterruptedException {
    while (true) {
      if (cancelled != null) {
        CancellationException e = new CancellationException("stream cancelled: " + cancelled.getMessage());
        e.initCause(cancelled);
        throw e;
      }
      if (consumed == bodies.size() || stopped) {
        return;
      }
      long left = lastHeard + timeoutNanos - System.nanoTime();
      if (left <= 0) {
        TimeoutException e = new TimeoutException("the reader acknowledged no batch within " + timeoutNanos / 1_000_000
            + " ms");
        cancelled = e;
        throw e;
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }
}
