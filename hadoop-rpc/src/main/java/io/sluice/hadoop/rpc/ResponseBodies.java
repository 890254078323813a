package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegisteredAllocator;
import java.io.IOException;
import org.apache.hadoop.ipc.SluiceCallOutcome;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Response bodies a server keeps in registered memory until their caller has READ them. Each body
 * gets a region of its own, registered for the calling node only (no other peer's READ of it is
 * served) under a fresh key; when the caller sends RELEASE, or its deadline passes first (a
 * caller that died or timed out never releases), the region is closed, which revokes that key,
 * so a descriptor seen once never reads a later body. A node's allocator is closed after a
 * lifetime without responses.
 *
 * <p>Owns every region it publishes. Thread safe.
 */
final class ResponseBodies implements AutoCloseable {
  private record Entry(long owner, RegisteredRegion region, PeerPool pool, long deadlineNanos) {}

  /** The regions shown to one peer node, each registered for it alone and never reused. */
  private static final class PeerPool {
    final RegisteredAllocator regions;
    volatile long lastUsedNanos = System.nanoTime();

    PeerPool(RegisteredAllocator regions) {
      this.regions = regions;
    }
  }

  private final RegisteredAllocator memory;
  private final long lifetimeNanos;
  private final AtomicLong nextId = new AtomicLong(1);
  private final Map<Long, Entry> bodies = new ConcurrentHashMap<>();
  private final Map<Long, PeerPool> peers = new ConcurrentHashMap<>();
  /** Runs {@link #sweep} periodically; owned by the caller, which stops it before {@link #close}. */
  ResponseBodies(RegisteredAllocator memory, long lifetimeMs, ScheduledExecutorService timer) {
    this.memory = memory;
    this.lifetimeNanos = TimeUnit.MILLISECONDS.toNanos(lifetimeMs);
    long period = Math.max(100, Math.min(lifetimeMs / 4, 5_000));
    timer.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
  }

  /** Writes a body into a new region that {@code owner} may READ; the caller sends its descriptor. */
  Remote publish(long owner, SluiceCallOutcome outcome) throws IOException {
    int length = outcome.bodyLength();
    PeerPool pool;
    RegisteredRegion region;
    while (true) {
      pool = peers.computeIfAbsent(owner,
          node -> new PeerPool(memory.newChild("response bodies to node " + Long.toHexString(node),
              AllocatorOptions.DEFAULTS.withReader(node))));
      pool.lastUsedNanos = System.nanoTime();
      try {
        region = pool.regions.allocate(length);
        break;
      } catch (IllegalStateException e) {
        if (!pool.regions.isClosed()) {
          throw e;
        }
        peers.remove(owner, pool); // the sweeper retired it just now: take a fresh one
      }
    }
    try {
      outcome.writeBody(region.buffer());
      long id = nextId.getAndIncrement();
      bodies.put(id, new Entry(owner, region, pool, System.nanoTime() + lifetimeNanos));
      return new Remote(region.descriptor(), length, id);
    } catch (IOException | RuntimeException e) {
      pool.regions.free(region);
      throw e;
    }
  }

  /** Frees bodies their owner has READ. Unknown ids and other nodes' ids are ignored. */
  void release(long owner, long[] ids) {
    for (long id : ids) {
      Entry e = bodies.get(id);
      if (e != null && e.owner() == owner && bodies.remove(id, e)) {
        e.pool().regions.free(e.region()); // revokes its key
      }
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
        e.getValue().pool().regions.free(e.getValue().region()); // never released: revoke it
      }
    }
    for (Map.Entry<Long, PeerPool> p : peers.entrySet()) {
      if (now - p.getValue().lastUsedNanos > lifetimeNanos && peers.remove(p.getKey(), p.getValue())) {
        p.getValue().regions.shutdown();
      }
    }
  }

  @Override
  public void close() {
    for (Long id : bodies.keySet()) {
      Entry e = bodies.remove(id);
      if (e != null) {
        e.pool().regions.free(e.region());
      }
    }
    for (Long node : peers.keySet()) {
      PeerPool p = peers.remove(node);
      if (p != null) {
        p.regions.shutdown();
      }
    }
  }
}
