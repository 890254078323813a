package io.sluice.flight.server;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.ConfigKey;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallStatus;

/**
 * The threads that serve one kind of stream: a fixed number of them, a share of them per client,
 * and a larger share per host, for the several clients (processes) one host runs. A stream whose
 * client or host already holds its share, or that finds every thread busy, is refused at once with
 * RESOURCE_EXHAUSTED naming the setting to raise; so streams whose readers never read cannot grow
 * the server's threads, one client cannot take the threads others need, and neither can one host
 * however many clients it makes up (a holder of the secret mints transport identities at will; a
 * host is where its connections come from). A stream gives its thread and its shares back when its
 * task returns.
 *
 * <p>Thread safe. Owned by the server, which shuts it down.
 */
final class StreamPool {
  private final ThreadPoolExecutor threads;
  private final int perClient;
  private final int perHost;
  private final ConfigKey<Long> totalKey;
  private final ConfigKey<Long> clientKey;
  private final ConfigKey<Long> hostKey;
  private final Map<String, Integer> byClient = new HashMap<>(); // guarded by this
  private final Map<String, Integer> byHost = new HashMap<>(); // guarded by this

  /**
   * A pool of {@code total} threads (at most 4096), of which one client holds at most {@code
   * perClient} and the clients of one host at most {@code perHost}: the values of those keys in
   * {@code config}, which refusals name.
   */
  StreamPool(String threadName, TransportConfig config, ConfigKey<Long> total, ConfigKey<Long> perClient,
      ConfigKey<Long> perHost) {
    int n = (int) Math.min(4096, config.value(total));
    this.threads = new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
    this.threads.allowCoreThreadTimeOut(true);
    this.perClient = (int) Math.min(n, config.value(perClient));
    this.perHost = (int) Math.min(n, config.value(perHost));
    this.totalKey = total;
    this.clientKey = perClient;
    this.hostKey = perHost;
  }

  /**
   * Runs {@code stream} on a thread of the pool, on behalf of {@code requester} (empty: a client
   * the server does not know, held to the total alone).
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException RESOURCE_EXHAUSTED when the client or
   *     its host holds its share or every thread is busy, UNAVAILABLE when the server is shutting
   *     down
   */
  void execute(Optional<Requester> requester, Runnable stream) {
    if (requester.isEmpty()) {
      try {
        threads.execute(stream);
      } catch (RejectedExecutionException e) {
        throw refused();
      }
      return;
    }
    Requester who = requester.get();
    admit(who);
    try {
      threads.execute(() -> {
        try {
          stream.run();
        } finally {
          release(who);
        }
      });
    } catch (RejectedExecutionException e) {
      release(who);
      throw refused();
    }
  }

  private synchronized void admit(Requester who) {
    if (byClient.getOrDefault(who.client(), 0) >= perClient) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("this client (" + who.client() + ") already holds "
          + perClient + " streams of this server (" + clientKey.key() + ")").toRuntimeException();
    }
    if (byHost.getOrDefault(who.host(), 0) >= perHost) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("the clients of this client's host (" + who.host()
          + ") already hold " + perHost + " streams of this server (" + hostKey.key() + ")").toRuntimeException();
    }
    byClient.merge(who.client(), 1, Integer::sum);
    byHost.merge(who.host(), 1, Integer::sum);
  }

  private synchronized void release(Requester who) {
    byClient.computeIfPresent(who.client(), (c, n) -> n <= 1 ? null : n - 1);
    byHost.computeIfPresent(who.host(), (h, n) -> n <= 1 ? null : n - 1);
  }

  /**
   * How many streams one client may hold at once: its share, never more than its host's share nor
   * the pool's threads. The data-plane offer tells clients this number, so that they do not pass it.
   */
  int perClient() {
    return Math.min(perClient, perHost);
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
