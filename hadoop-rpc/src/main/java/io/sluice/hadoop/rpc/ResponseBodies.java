package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import java.io.IOException;
import org.apache.hadoop.ipc.SluiceCallOutcome;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Response bodies a server keeps in registered memory until their caller has READ them. A body
 * is freed when its caller sends RELEASE, or when its deadline passes (a caller that died or timed
 * out never will), or when this is closed.
 *
 * <p>Owns every region it publishes. Thread safe.
 */
final class ResponseBodies implements AutoCloseable {
  private record Entry(long owner, RegisteredRegion region, long deadlineNanos) {}

  private final Transport transport;
  private final long lifetimeNanos;
  private final AtomicLong nextId = new AtomicLong(1);
  private final Map<Long, Entry> bodies = new ConcurrentHashMap<>();
  private final ScheduledExecutorService sweeper;

  ResponseBodies(Transport transport, long lifetimeMs) {
    this.transport = transport;
    this.lifetimeNanos = TimeUnit.MILLISECONDS.toNanos(lifetimeMs);
    this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-rpc-response-sweeper");
      t.setDaemon(true);
      return t;
    });
    long period = Math.max(100, Math.min(lifetimeMs / 4, 5_000));
    sweeper.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
  }

  /** Writes a body into a new region that {@code owner} may READ; the caller sends its descriptor. */
  Remote publish(long owner, SluiceCallOutcome outcome) throws IOException {
    int length = outcome.bodyLength();
    // A fresh region for every body: its key was shown to one caller only, so no other caller can
    // ever READ what it holds.
    RegisteredRegion region = transport.allocate(length);
    try {
      outcome.writeBody(region.buffer());
      long id = nextId.getAndIncrement();
      bodies.put(id, new Entry(owner, region, System.nanoTime() + lifetimeNanos));
      return new Remote(region.descriptor(), length, id);
    } catch (IOException | RuntimeException e) {
      region.close();
      throw e;
    }
  }

  /** Frees a body its owner has READ. Unknown ids and other nodes' ids are ignored. */
  void release(long owner, long id) {
    Entry e = bodies.get(id);
    if (e != null && e.owner() == owner && bodies.remove(id, e)) {
      e.region().close();
    }
  }

  /** Bodies not yet released: a leak check for tests. */
  int pending() {
    return bodies.size();
  }

  private void sweep() {
    long now = System.nanoTime();
    for (Iterator<Map.Entry<Long, Entry>> it = bodies.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Entry> e = it.next();
      if (now - e.getValue().deadlineNanos() > 0 && bodies.remove(e.getKey(), e.getValue())) {
        e.getValue().region().close();
      }
    }
  }

  @Override
  public void close() {
    sweeper.shutdownNow();
    for (Long id : bodies.keySet()) {
      Entry e = bodies.remove(id);
      if (e != null) {
        e.region().close();
      }
    }
  }
}
