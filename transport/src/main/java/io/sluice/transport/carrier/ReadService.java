package io.sluice.transport.carrier;

import io.sluice.transport.TransportException;
import java.nio.ByteBuffer;

/**
 * What a carrier serves for the READ frames of authenticated peers: a provider's registered
 * memory (tcp). A carrier without one answers every READ frame with an unknown key, since its
 * provider moves READs on a path of its own.
 *
 * <p>Called on a selector thread that serves many connections, so it must answer quickly and
 * must be thread safe.
 */
@FunctionalInterface
public interface ReadService {
  /**
   * The bytes of one READ. The carrier owns {@code written} from here on: it runs it once the
   * bytes are on the wire (or sealed into a copy), or when the connection closes first, so the
   * memory stays pinned exactly that long.
   */
  record Bytes(ByteBuffer data, Runnable written) {}

  /**
   * Finds the bytes {@code [offset, offset + length)} of the region with {@code key} for {@code
   * peerNode}.
   *
   * @throws TransportException answered with an ERROR frame of the matching code: an unknown,
   *     revoked or not-granted key, a range outside the region
   */
  Bytes read(long peerNode, long key, long offset, int length) throws TransportException;
}
