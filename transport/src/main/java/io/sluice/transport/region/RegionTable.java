package io.sluice.transport.region;

import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.UnknownKeyException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The keys a transport serves: each live region under its random, unguessable 64-bit key, plus a
 * bounded memory of recently revoked keys so that a READ racing a revocation is told "revoked"
 * rather than "unknown". Thread safe.
 */
public final class RegionTable {
  private static final int TOMBSTONES = 65_536;

  private final SecureRandom random = new SecureRandom();
  private final Map<Long, Region> live = new ConcurrentHashMap<>();
  private final Map<Long, Boolean> revoked =
      new LinkedHashMap<>(1024, 0.75f, false) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > TOMBSTONES;
        }
      };

  /** A fresh key, never 0, not in use. */
  public long newKey() {
    while (true) {
      long k = random.nextLong();
      if (k != 0 && !live.containsKey(k)) {
        synchronized (revoked) {
          if (!revoked.containsKey(k)) {
            return k;
          }
        }
      }
    }
  }

  public void add(Region region) {
    live.put(region.descriptor().key(), region);
  }

  /**
   * Removes the key so that no new READ can find it. The key is remembered as revoked before it
   * leaves the live table, so a lookup racing this call finds it in one or the other and is told
   * "revoked", never "unknown".
   */
  public void revoke(long key) {
    if (live.containsKey(key)) {
      synchronized (revoked) {
        revoked.put(key, Boolean.TRUE);
      }
      live.remove(key);
    }
  }

  /**
   * The live region with that key that {@code peerNode} may READ, retained: the caller must
   * {@link Region#release()} it. A region kept for another peer is reported exactly as an
   * unknown key, so its existence is not revealed.
   *
   * @throws RegionRevokedException if the key was revoked recently
   * @throws UnknownKeyException if no live region has that key, or it is not for this peer
   */
  public Region acquire(long key, long peerNode) throws RegionRevokedException, UnknownKeyException {
    Region r = live.get(key);
    if (r != null && !r.readableBy(peerNode)) {
      throw new UnknownKeyException("no registered region has that key");
    }
    if (r != null && r.isOpen() && r.tryRetain()) {
      if (r.isOpen()) {
        return r;
      }
      r.release();
    }
    // A region found closed, or a key already gone from the live table, counts as revoked when
    // its tombstone is there; revoke() writes the tombstone before it removes the live entry.
    boolean wasRevoked;
    synchronized (revoked) {
      wasRevoked = revoked.containsKey(key) || r != null;
    }
    if (wasRevoked) {
      throw new RegionRevokedException("region was revoked by its owner");
    }
    throw new UnknownKeyException("no registered region has that key");
  }

  /** Every region still registered, for closing at shutdown. */
  public List<Region> liveRegions() {
    return new ArrayList<>(live.values());
  }
}
