package io.sluice.flight.plane;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.FlightStream;

/**
 * {@link FlightStream#next()} with a deadline, for the server's side of a call. Flight gives the
 * server no way to end such a wait: its stream of the client's messages cannot be cancelled, and
 * ending the call does not wake a thread waiting in it. So past the deadline the waiting thread is
 * interrupted, and only while it still waits here; Flight ends its wait with an error, and this
 * throws {@link TimeoutException}. An interrupt the deadline sent that the wait did not take is
 * cleared before this returns, so it reaches nothing the thread does next (an interrupt that
 * someone else sent in the same moment, such as a pool shutting down, is cleared with it).
 *
 * <p>Thread safe; the deadlines share one daemon timer thread.
 */
public final class BoundedNext {
  private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "sluice-flight-server-deadlines");
    t.setDaemon(true);
    return t;
  });

  private BoundedNext() {}

  /**
   * {@code in.next()}, waiting at most {@code timeoutNanos}.
   *
   * @throws TimeoutException when nothing came (neither a message nor the call's end) in time
   * @throws org.apache.arrow.flight.FlightRuntimeException as {@code next()} does
   */
  public static boolean next(FlightStream in, long timeoutNanos) throws TimeoutException {
    Waiter waiter = new Waiter(Thread.currentThread());
    ScheduledFuture<?> deadline = DEADLINES.schedule(waiter::expire, timeoutNanos, TimeUnit.NANOSECONDS);
    boolean more;
    try {
      more = in.next();
    } catch (RuntimeException e) {
      deadline.cancel(false);
      if (waiter.finish()) {
        TimeoutException t = new TimeoutException("nothing arrived within " + timeoutNanos / 1_000_000 + " ms");
        t.initCause(e);
        throw t;
      }
      throw e;
    }
    deadline.cancel(false);
    waiter.finish(); // what arrived as the deadline passed still counts
    return more;
  }

  /** One wait: the deadline interrupts the thread only while it waits. */
  private static final class Waiter {
    private final Thread thread;
    private boolean waiting = true; // guarded by this
    private boolean expired; // guarded by this

    Waiter(Thread thread) {
      this.thread = thread;
    }

    synchronized void expire() {
      if (waiting) {
        expired = true;
        thread.interrupt();
      }
    }

    /**
     * On the waiting thread, when its wait is over: no interrupt comes from the deadline after
     * this, and the one it sent is cleared. True if the deadline passed.
     */
    synchronized boolean finish() {
      if (waiting) {
        waiting = false;
        if (expired) {
          Thread.interrupted();
        }
      }
      return expired;
    }
  }
}
