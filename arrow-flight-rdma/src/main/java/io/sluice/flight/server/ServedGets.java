package io.sluice.flight.server;

import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.Pull;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The data-plane gets a server is serving now, by the grant that opened each, and the transport
 * side of them: a {@link Pull} from a peer reaches the get it names only when that peer is the
 * one the grant was issued to. A grant is 32 random bytes that only its holder and this server
 * know, and a pull arrives over the authenticated transport connection, so the announcements a
 * reader trusts never travel unauthenticated.
 *
 * <p>Thread safe.
 */
final class ServedGets {
  private final Map<ByteBuffer, ServedGet> live = new ConcurrentHashMap<>();

  void add(byte[] grant, ServedGet get) {
    live.put(ByteBuffer.wrap(grant.clone()), get);
  }

  void remove(byte[] grant) {
    live.remove(ByteBuffer.wrap(grant));
  }

  int size() {
    return live.size();
  }

  /**
   * Answers a pull request from the authenticated transport peer {@code peerNode}.
   *
   * @throws IllegalArgumentException for a malformed request, or one that names no get of that peer
   */
  ByteBuffer pull(long peerNode, ByteBuffer request) {
    Pull p = DataPlaneProtocol.decodePull(request);
    ServedGet get = live.get(ByteBuffer.wrap(p.grant()));
    if (get == null || get.peer() != peerNode) {
      throw new IllegalArgumentException("no data-plane stream of this peer has that grant");
    }
    return DataPlaneProtocol.encode(get.pull(p.consumed(), p.maxBodies(), p.stop()));
  }
}
