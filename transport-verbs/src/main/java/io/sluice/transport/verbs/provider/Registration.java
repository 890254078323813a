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
 * <p>On a transport whose peers share one domain ({@code verbs.readDomains=shared}) a region
 * every peer may read is registered for remote READ once, in that domain, at the first peer's
 * look-up; a region restricted to some peers is served to none, since every peer's READ queue
 * pair would reach it there.
 *
 * <p>Thread safe: the peer registrations are guarded by this.
 */
final class Registration {
  private final Region region;
  private final ByteBuffer memory;
  private final Optional<RdmaRegion> local;
  private final boolean writable;
  private final Map<Long, RdmaRegion> peers = new HashMap<>();
  /** The registration in the domain every peer shares; null until a peer looks it up there. */
  private RdmaRegion shared;
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
    checkReadable(peer);
    if (local.isEmpty()) {
      return Optional.empty();
    }
    RdmaRegion mr = peers.get(peer);
    if (mr == null) {
      mr = registerReadable(() -> node.peerDomain(peer));
      peers.put(peer, mr);
    }
    return Optional.of(mr);
  }

  /**
   * The memory region through which every peer READs this region, registered in the domain
   * the peers share ({@link RdmaNode#sharedDomain}) at the first look-up. Empty for a region of
   * length 0.
   *
   * @throws UnknownKeyException if the peer may not read it (not revealing that it exists)
   * @throws RegionRevokedException if it was revoked
   * @throws TransportException if the region is restricted to some peers, which a shared domain
   *     cannot keep from the others
   */
  synchronized Optional<RdmaRegion> forEveryPeer(long peer, RdmaNode node) throws TransportException {
    checkReadable(peer);
    if (!region.readableByEveryPeer()) {
      throw new TransportException("this region is restricted to some peers, and this node's peers READ through one"
          + " shared protection domain (verbs.readDomains=shared), which serves only regions every peer may read");
    }
    if (local.isEmpty()) {
      return Optional.empty();
    }
    if (shared == null) {
      shared = registerReadable(node::sharedDomain);
    }
    return Optional.of(shared);
  }

  /** A domain with one reference for the caller, allocated if need be. */
  private interface DomainReference {
    ProtectionDomain acquire() throws IOException;
  }

  /** Registers the memory for remote READ in the domain {@code domain} hands out. */
  private RdmaRegion registerReadable(DomainReference domain) throws TransportException {
    try {
      ProtectionDomain d = domain.acquire();
      try {
        return d.registerReadable(memory);
      } finally {
        d.release(); // the memory region holds its own reference
      }
    } catch (IOException e) {
      throw new TransportException("cannot register " + memory.capacity() + " bytes for peers' READs: "
          + e.getMessage(), e);
    }
  }

  private void checkReadable(long peer) throws TransportException {
    if (revoked) {
      throw new RegionRevokedException("region was revoked by its owner");
    }
    if (!region.readableBy(peer)) {
      throw new UnknownKeyException("no registered region has that key");
    }
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
      if (shared != null) {
        all.add(shared);
        shared = null;
      }
    }
    all.forEach(RdmaRegion::close);
    local.ifPresent(RdmaRegion::close);
  }

  /** How many peers have a memory region of this region. */
  synchronized int peerRegistrations() {
    return peers.size();
  }

  /** Whether this region is registered in the domain every peer shares. */
  synchronized boolean sharedRegistration() {
    return shared != null;
  }
}
