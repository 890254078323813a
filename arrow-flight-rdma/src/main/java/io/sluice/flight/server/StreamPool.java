package io.sluice.flight.server;

import io.sluice.transport.config.ConfigKey;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;

/**
 * The threads that serve one kind of stream: a fixed number of them, and a share of them per
 * client. A stream whose client already holds its share, or that finds every thread busy, is
 * refused at once with RESOURCE_EXHAUSTED naming the setting to raise; so streams whose readers
 * never read cannot grow the server's threads, and one client cannot take the threads others need.
 * A stream gives its thread and its client's share back when its task returns.
 *
 * <p>Thread safe. Owned by the server, which shuts it down.
 */
final class StreamPool {
  private final ThreadPoolExecutor threads;
  private final int perClient;
  private final ConfigKey<?> totalKey;
  private final ConfigKey<?> shareKey;
  private final Map<String, Integer> held = new ConcurrentHashMap<>();

  StreamPool(String threadName, long threads, long perClient, ConfigKey<?> totalKey, ConfigKey<?> shareKey) {
    int n = (int) Math.min(4096, threads);
    this.threads = new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
    this.threads.allowCoreThreadTimeOut(true);
    this.perClient = (int) Math.min(n, perClient);
    this.totalKey = totalKey;
    this.shareKey = shareKey;
  }

  /**
   * Runs {@code stream} on a thread of the pool, on behalf of {@code client} (null: a client the
   * server does not know, held to the total alone).
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException RESOURCE_EXHAUSTED when the client holds
   *     its share or every thread is busy, UNAVAILABLE when the server is shutting down
   */
  void execute(String client, Runnable stream) {
    if (client == null) {
      try {
        threads.execute(stream);
      } catch (RejectedExecutionException e) {
        throw refused();
      }
      return;
    }
    boolean[] admitted = {false};
    held.compute(client, (c, n) -> {
      int now = n == null ? 0 : n;
      if (now >= perClient) {
        return n;
      }
      admitted[0] = true;
      return now + 1;
    });
    if (!admitted[0]) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("this client (" + client + ") already holds " + perClient
          + " streams of this server (" + shareKey.key() + ")").toRuntimeException();
    }
    try {
      threads.execute(() -> {
        try {
          stream.run();
        } finally {
          release(client);
        }
      });
    } catch (RejectedExecutionException e) {
      release(client);
      throw refused();
    }
  }

  private void release(String client) {
    held.computeIfPresent(client, (c, n) -> n <= 1 ? null : n - 1);
  }

  /**
   * How many streams one client may hold at once: its share, never more than the pool's threads.
   * The data-plane offer tells clients this number, so that they do not pass it.
   */
  int perClient() {
    return perClient;
  }

  /** Threads the pool has now. */
  int threadCount() {
    return threads.getPoolSize();
  }

  void shutdownNow() {
    threads.shutdownNow();
  }

  /**
   * After {@link #shutdownNow}: waits at most {@code timeoutNanos} for every stream's task to
   * return (it lets go of its table and buffers only then); false if some had not.
   */
  boolean awaitTermination(long timeoutNanos) {
    try {
      return threads.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private org.apache.arrow.flight.FlightRuntimeException refused() {
    if (threads.isShutdown()) {
      return CallStatus.UNAVAILABLE.withDescription("the server is shutting down").toRuntimeException();
    }
    return CallStatus.RESOURCE_EXHAUSTED.withDescription("every stream thread of this server is busy ("
        + totalKey.key() + ")").toRuntimeException();
  }
}
