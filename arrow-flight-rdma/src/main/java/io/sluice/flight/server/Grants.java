package io.sluice.flight.server;

import io.sluice.flight.protocol.DataPlaneProtocol;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Single-use tokens that tie a Flight call to an authenticated transport peer. A peer asks for a
 * grant over its transport connection (so only a holder of the shared secret gets one); the
 * DoExchange call that opens a data-plane stream presents it, and the stream's memory is then
 * registered for that peer alone. A grant expires after {@code ttlNanos} and can be redeemed
 * once. At most {@link #MAX_OUTSTANDING} grants wait at a time; the oldest go first.
 *
 * <p>Thread safe.
 */
final class Grants {
  static final int MAX_OUTSTANDING = 65_536;

  private record Grant(long peer, long expires) {}

  private final SecureRandom random = new SecureRandom();
  private final long ttlNanos;
  private final LinkedHashMap<ByteBuffer, Grant> outstanding = new LinkedHashMap<>();

  Grants(long ttlNanos) {
    this.ttlNanos = ttlNanos;
  }

  /** A fresh grant for the authenticated transport peer {@code peerNode}. */
  synchronized byte[] issue(long peerNode) {
    long now = System.nanoTime();
    expire(now);
    if (outstanding.size() >= MAX_OUTSTANDING) {
      Iterator<Map.Entry<ByteBuffer, Grant>> it = outstanding.entrySet().iterator();
      it.next();
      it.remove();
    }
    byte[] token = new byte[DataPlaneProtocol.GRANT_BYTES];
    random.nextBytes(token);
    outstanding.put(ByteBuffer.wrap(token.clone()), new Grant(peerNode, now + ttlNanos));
    return token;
  }

  /** The peer a live grant was issued to, consuming it; empty if unknown, used or expired. */
  synchronized OptionalLong redeem(byte[] token) {
    long now = System.nanoTime();
    Grant g = outstanding.remove(ByteBuffer.wrap(token));
    if (g == null || now - g.expires() > 0) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(g.peer());
  }

  private void expire(long now) {
    for (Iterator<Grant> it = outstanding.values().iterator(); it.hasNext(); ) {
      if (now - it.next().expires() <= 0) {
        break; // insertion order is expiry order
      }
      it.remove();
    }
  }
}
