package io.sluice.flight.server;

import io.sluice.flight.protocol.DataPlaneProtocol;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import io.sluice.flight.FlightOption;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Single-use tokens that tie a Flight call to an authenticated transport peer. A peer asks for a
 * grant over its transport connection (so only a holder of the shared secret gets one); the
 * DoExchange call that opens a data-plane stream presents it, and the stream's memory is then
 * registered for that peer alone. A grant expires after {@code ttlNanos} and can be redeemed
 * once. One peer holds at most {@code perPeer} grants unredeemed (past that its requests are
 * refused, and nobody else's grants go), and at most {@link #MAX_OUTSTANDING} wait in all; past
 * that the oldest go first.
 *
 * <p>Thread safe.
 */
final class Grants {
  static final int MAX_OUTSTANDING = 65_536;

  private record Grant(long peer, long expires) {}

  private final SecureRandom random = new SecureRandom();
  private final long ttlNanos;
  private final LinkedHashMap<ByteBuffer, Grant> outstanding = new LinkedHashMap<>();
  private final Map<Long, Integer> perPeerHeld = new HashMap<>();
  private final long perPeer;

  Grants(long ttlNanos, long perPeer) {
    this.ttlNanos = ttlNanos;
    this.perPeer = perPeer;
  }

  /**
   * A fresh grant for the authenticated transport peer {@code peerNode}.
   *
   * @throws IllegalStateException if that peer holds its quota of unredeemed grants
   */
  synchronized byte[] issue(long peerNode) {
    long now = System.nanoTime();
    expire(now);
    if (perPeerHeld.getOrDefault(peerNode, 0) >= perPeer) {
      throw new IllegalStateException("this peer holds " + perPeer + " unredeemed data-plane grants ("
          + FlightOption.GRANTS_PER_CLIENT.key() + ")");
    }
    if (outstanding.size() >= MAX_OUTSTANDING) {
      Iterator<Map.Entry<ByteBuffer, Grant>> it = outstanding.entrySet().iterator();
      forgetOne(it.next().getValue().peer());
      it.remove();
    }
    perPeerHeld.merge(peerNode, 1, Integer::sum);
    byte[] token = new byte[DataPlaneProtocol.GRANT_BYTES];
    random.nextBytes(token);
    outstanding.put(ByteBuffer.wrap(token.clone()), new Grant(peerNode, now + ttlNanos));
    return token;
  }

  /** The peer a live grant was issued to, consuming it; empty if unknown, used or expired. */
  synchronized OptionalLong redeem(byte[] token) {
    long now = System.nanoTime();
    Grant g = outstanding.remove(ByteBuffer.wrap(token));
    if (g != null) {
      forgetOne(g.peer());
    }
    if (g == null || now - g.expires() > 0) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(g.peer());
  }

  private void expire(long now) {
    for (Iterator<Grant> it = outstanding.values().iterator(); it.hasNext(); ) {
      Grant g = it.next();
      if (now - g.expires() <= 0) {
        break; // insertion order is expiry order
      }
      forgetOne(g.peer());
      it.remove();
    }
  }

  private void forgetOne(long peer) {
    perPeerHeld.computeIfPresent(peer, (p, n) -> n <= 1 ? null : n - 1);
  }
}
