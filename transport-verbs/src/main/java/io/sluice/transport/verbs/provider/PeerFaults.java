package io.sluice.transport.verbs.provider;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which peers lost their RDMA admission. Each READ queue pair a peer breaks (the device
 * refused one of its READs: a key it may not use, or a revoked region) counts as a fault; a
 * peer with more than {@link #LIMIT} faults within {@link #WINDOW_NANOS} is barred from
 * admitting queue pairs for the life of this transport, which is logged once. Honest readers
 * fault only when a region is revoked under their READs, which costs one fault per queue
 * pair; a peer probing keys pays one queue pair per guess and runs out.
 *
 * <p>Thread safe.
 */
final class PeerFaults {
  static final int LIMIT = 16;
  static final long WINDOW_NANOS = 60_000_000_000L;

  private static final Logger LOG = LoggerFactory.getLogger(PeerFaults.class);

  private final LongSupplier clock;
  /** Times of recent faults per peer; guarded by itself. */
  private final Map<Long, ArrayDeque<Long>> recent = new HashMap<>();
  private final Set<Long> barred = ConcurrentHashMap.newKeySet();

  PeerFaults(LongSupplier clock) {
    this.clock = clock;
  }

  /** Counts one fault of {@code peer}; returns true if this one barred it. */
  boolean record(long peer) {
    long now = clock.getAsLong();
    synchronized (recent) {
      ArrayDeque<Long> times = recent.computeIfAbsent(peer, p -> new ArrayDeque<>());
      times.addLast(now);
      while (!times.isEmpty() && now - times.peekFirst() > WINDOW_NANOS) {
        times.removeFirst();
      }
      if (times.size() <= LIMIT) {
        return false;
      }
      recent.remove(peer);
    }
    if (barred.add(peer)) {
      LOG.warn("peer node {} broke more than {} RDMA READ queue pairs within {} s (READs its device refused);"
          + " it may not open RDMA queue pairs to this node any more", peer, LIMIT, WINDOW_NANOS / 1_000_000_000L);
      return true;
    }
    return false;
  }

  boolean isBarred(long peer) {
    return barred.contains(peer);
  }
}
