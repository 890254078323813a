package io.sluice.transport.verbs.provider;

import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.region.Region;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A region of the verbs transport and its memory regions: one in the node's own protection
 * domain for local use (a READ destination when writable; never remotely readable), and one
 * in the protection domain of each peer that looked its key up while allowed to read it. A
 * peer's READs can only name memory in its own domain, so the device enforces what the key
 * table decides: a peer that was never allowed, or whose grant was withdrawn, or whose
 * region was revoked, has no memory region to READ through.
 *
 * <p>Thread safe: the peer registrations are guarded by this.
 */
final class Registration {
  private final Region region;
  private final ByteBuffer memory;
  private final Optional<RdmaRegion> local;
  private final boolean writable;
  private final Map<Long, RdmaRegion> peers = new HashMap<>();
  private boolean revoked;

  Registration(Region region, ByteBuffer memory, Optional<RdmaRegion> local) {
    this.region = region;
    this.memory = memory;
    this.local = local;
    this.writable = !memory.isReadOnly();
  }

  Region region() {
    return region;
  }

  /** The local memory region; empty for a region of length 0. */
  Optional<RdmaRegion> mrIfAny() {
    return local;
  }

  RdmaRegion mr() {
    return local.orElseThrow();
  }

  boolean writable() {
    return writable;
  }

  /**
   * The memory region through which {@code peer} READs this region, registered in the peer's
   * domain on first use. Empty for a region of length 0.
   *
   * @throws UnknownKeyException if the peer may not read it (not revealing that it exists)
   * @throws RegionRevokedException if it was revoked
   */
  synchronized Optional<RdmaRegion> forPeer(long peer, RdmaNode node) throws TransportException {
    if (revoked) {
      throw new RegionRevokedException("region was revoked by its owner");
    }
    if (!region.readableBy(peer)) {
      throw new UnknownKeyException("no registered region has that key");
    }
    if (local.isEmpty()) {
      return Optional.empty();
    }
    RdmaRegion mr = peers.get(peer);
    if (mr == null) {
      try {
        ProtectionDomain domain = node.peerDomain(peer);
        try {
          mr = domain.registerReadable(memory);
        } finally {
          domain.release(); // the memory region holds its own reference
        }
      } catch (IOException e) {
        throw new TransportException("cannot register " + memory.capacity() + " bytes for a peer's READs: "
            + e.getMessage(), e);
      }
      peers.put(peer, mr);
    }
    return Optional.of(mr);
  }

  /** Deregisters {@code peer}'s memory region, if any: its READs fail from now on. */
  void withdraw(long peer) {
    RdmaRegion mr;
    synchronized (this) {
      mr = peers.remove(peer);
    }
    if (mr != null) {
      mr.close();
    }
  }

  /** Deregisters every memory region of this region (at revocation). Idempotent. */
  void revoke() {
    List<RdmaRegion> all;
    synchronized (this) {
      revoked = true;
      all = new ArrayList<>(peers.values());
      peers.clear();
    }
    all.forEach(RdmaRegion::close);
    local.ifPresent(RdmaRegion::close);
  }

  /** How many peers have a memory region of this region. */
  synchronized int peerRegistrations() {
    return peers.size();
  }
}
