package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * This client's share of one server's data-plane gets: at most the number the server's offer
 * allows ({@link io.sluice.flight.protocol.DataPlaneOffer#maxStreams()}) are open at once. A get
 * takes a {@link Place} before it asks for its grant and gives it back once its call has ended
 * (the server counts the get until then); one more waits, in the order they came, until a place
 * is given back, its deadline passes or the share is closed.
 *
 * <p>Thread safe. Owned by the {@link DataPlaneSession}, which closes it: every waiter then fails,
 * and places still held are given back into a share nobody takes from any more.
 */
final class GetShare implements AutoCloseable {
  private final int max;
  private final String server;
  // Fair, so that a place given back goes to the get that has waited longest.
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Condition given = lock.newCondition();
  private int held;
  private boolean closed;

  /** @param server the server, as errors name it */
  GetShare(int max, String server) {
    if (max < 1) {
      throw new IllegalArgumentException("a share of " + max + " gets");
    }
    this.max = max;
    this.server = server;
  }

  /** One open get's place in the share; {@link #close()} gives it back, once. */
  final class Place implements AutoCloseable {
    private boolean returned;

    @Override
    public void close() {
      lock.lock();
      try {
        if (!returned) {
          returned = true;
          held--;
          given.signal();
        }
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * Takes a place, waiting at most {@code timeoutNanos} for one.
   *
   * @throws TimeoutException naming the bound and {@link FlightOption#DATA_PLANE_GETS_PER_CLIENT}
   *     if every place stayed held until the deadline
   * @throws IllegalStateException if the share is (or gets) closed
   */
  Place take(long timeoutNanos) throws TimeoutException, InterruptedException {
    lock.lockInterruptibly();
    try {
      long left = timeoutNanos;
      while (!closed && held >= max) {
        if (left <= 0) {
          throw new TimeoutException("no data-plane get of " + server + " ended within "
              + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: this client holds " + max
              + " of them, the most that server lets one client hold at once ("
              + FlightOption.DATA_PLANE_GETS_PER_CLIENT.key() + ")");
        }
        left = given.awaitNanos(left);
      }
      if (closed) {
        throw new IllegalStateException("the client's data-plane session with " + server + " is closed");
      }
      held++;
      return new Place();
    } finally {
      lock.unlock();
    }
  }

  /** The most gets of this server open at once. */
  int max() {
    return max;
  }

  /** Wakes every waiter, which fails; no place is taken any more. */
  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      given.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
