package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.transport.ResourceExhaustedException;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Single-use tokens that tie a Flight call to an authenticated transport peer. A peer asks for a
 * grant over its transport connection (so only a holder of the shared secret gets one); the
 * DoExchange call that opens a data-plane stream presents it, and the stream's memory is then
 * registered for that peer alone. A grant is the identity key's the peer's connection proved, not
 * merely its node id's: the stream checks that the node id it registers memory for still names
 * that key. A grant expires after {@code ttlNanos} and can be redeemed once.
 *
 * <p>Unredeemed grants are bounded three ways, and a grant leaves only by being redeemed or by
 * expiring, never to make room for another: one peer (a transport node) holds at most {@code
 * perPeer}, the peers of one host (where their connections come from, {@link HostKey}) at most
 * {@code perHost} together, and all peers at most {@link #MAX_OUTSTANDING}. A request past any of
 * them is refused for load ({@link ResourceExhaustedException}, which the peer sees as that class
 * and asks again later), naming the bound; so a holder of the secret who mints node ids on one host
 * takes at most that host's share, and nobody's grants go.
 *
 * <p>Thread safe.
 */
final class Grants {
  static final int MAX_OUTSTANDING = 65_536;

  /** Whom a grant was issued to: the node and the identity key the handshake proved, and its host. */
  record Holder(long node, byte[] identityKey, String host) {
    Holder {
      identityKey = identityKey.clone();
    }

    /** Whether {@code proven}, a key a transport connection proved, is the holder's. */
    boolean provedBy(byte[] proven) {
      return java.security.MessageDigest.isEqual(identityKey, proven);
    }

    @Override
    public byte[] identityKey() {
      return identityKey.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Holder h && node == h.node && java.util.Arrays.equals(identityKey, h.identityKey)
          && host.equals(h.host);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(node, java.util.Arrays.hashCode(identityKey), host);
    }

    @Override
    public String toString() {
      return "Holder[node " + Long.toHexString(node) + ", " + host + "]";
    }
  }

  private record Grant(Holder holder, long expires) {}

  private final SecureRandom random = new SecureRandom();
  private final long ttlNanos;
  private final LinkedHashMap<ByteBuffer, Grant> outstanding = new LinkedHashMap<>();
  private final Map<Long, Integer> byPeer = new HashMap<>();
  private final Map<String, Integer> byHost = new HashMap<>();
  private final long perPeer;
  private final long perHost;

  Grants(long ttlNanos, long perPeer, long perHost) {
    this.ttlNanos = ttlNanos;
    this.perPeer = perPeer;
    this.perHost = perHost;
  }

  /**
   * A fresh grant for the authenticated transport peer {@code peerNode}, which proved {@code
   * identityKey}, whose connection comes from {@code host}.
   *
   * @throws ResourceExhaustedException naming the bound, if that peer or its host holds its quota
   *     of unredeemed grants, or the server holds as many as it keeps
   */
  synchronized byte[] issue(long peerNode, byte[] identityKey, String host) throws ResourceExhaustedException {
    long now = System.nanoTime();
    expire(now);
    if (byPeer.getOrDefault(peerNode, 0) >= perPeer) {
      throw new ResourceExhaustedException("this peer holds " + perPeer
          + " unredeemed data-plane grants (" + FlightOption.GRANTS_PER_CLIENT.key() + ")");
    }
    if (byHost.getOrDefault(host, 0) >= perHost) {
      throw new ResourceExhaustedException("the peers of this peer's host (" + host + ") hold "
          + perHost + " unredeemed data-plane grants (" + FlightOption.GRANTS_PER_HOST.key() + ")");
    }
    if (outstanding.size() >= MAX_OUTSTANDING) {
      throw new ResourceExhaustedException("this server holds " + MAX_OUTSTANDING
          + " unredeemed data-plane grants, the most it keeps; they are redeemed or expire within "
          + FlightOption.ACK_TIMEOUT_MS.key());
    }
    Holder holder = new Holder(peerNode, identityKey, host);
    byPeer.merge(peerNode, 1, Integer::sum);
    byHost.merge(host, 1, Integer::sum);
    byte[] token = new byte[DataPlaneProtocol.GRANT_BYTES];
    random.nextBytes(token);
    outstanding.put(ByteBuffer.wrap(token.clone()), new Grant(holder, now + ttlNanos));
    return token;
  }

  /** Whom a live grant was issued to, consuming it; empty if unknown, used or expired. */
  synchronized Optional<Holder> redeem(byte[] token) {
    long now = System.nanoTime();
    Grant g = outstanding.remove(ByteBuffer.wrap(token));
    if (g != null) {
      forget(g.holder());
    }
    if (g == null || now - g.expires() > 0) {
      return Optional.empty();
    }
    return Optional.of(g.holder());
  }

  /** Unredeemed grants now, expired ones not yet dropped included. */
  synchronized int outstanding() {
    return outstanding.size();
  }

  private void expire(long now) {
    for (Iterator<Grant> it = outstanding.values().iterator(); it.hasNext(); ) {
      Grant g = it.next();
      if (now - g.expires() <= 0) {
        break; // insertion order is expiry order
      }
      forget(g.holder());
      it.remove();
    }
  }

  private void forget(Holder holder) {
    byPeer.computeIfPresent(holder.node(), (p, n) -> n <= 1 ? null : n - 1);
    byHost.computeIfPresent(holder.host(), (h, n) -> n <= 1 ? null : n - 1);
  }
}
