package io.sluice.transport.crypto;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which identity key each node id in use names, so that within one transport a node id stands
 * for one key. A node id is 64 bits of a hash of the key ({@link NodeIdentity}): a holder of the
 * secret who found a second key with another node's id (a search of about 2^64 keys) would
 * otherwise pass every check that compares node ids, a region's reader and grants, the shm OPEN,
 * a verbs protection domain, an application's grants and per-peer bounds.
 *
 * <p>A node id is held by each authenticated connection, in either direction, to the peer that
 * proved it ({@link #prove}), and by each region reader and reader grant that names it ({@link
 * #name}). While anything holds it, a handshake that proves another key with the same id is
 * refused. An id named before any connection proved it (the application learned it elsewhere) is
 * bound to the first key that proves it. When the last hold goes the id is forgotten, so there is
 * one entry per id held: the memory is bounded by the open connections and the live regions and
 * grants, which their owners bound, and nothing a peer sends grows it past those.
 *
 * <p>Thread safe.
 */
public final class PeerIdentities {
  private static final class Entry {
    /** Null until a connection proves the id. */
    byte[] key;
    int holds;
  }

  /** A hold of a node id; closing it lets go (idempotent). */
  @FunctionalInterface
  public interface Hold extends AutoCloseable {
    @Override
    void close();
  }

  private static final Hold NOTHING = () -> { };

  private final Map<Long, Entry> held = new HashMap<>();

  /**
   * Holds {@code node} for a connection whose peer proved {@code key} (the node id the handshake
   * derived from it) until the returned hold is closed.
   *
   * @throws AuthenticationFailedException if {@code node} is held for another key
   */
  public synchronized Hold prove(long node, byte[] key) throws AuthenticationFailedException {
    if (key.length != NodeIdentity.PUBLIC_KEY_LENGTH) {
      throw new IllegalArgumentException("an identity key has " + NodeIdentity.PUBLIC_KEY_LENGTH + " bytes, not "
          + key.length);
    }
    Entry e = held.get(node);
    if (e != null && e.key != null && !MessageDigest.isEqual(e.key, key)) {
      throw new AuthenticationFailedException(String.format("node %016x is already known here by another identity"
          + " key; a second key with the same node id is refused", node));
    }
    if (e == null) {
      e = new Entry();
      held.put(node, e);
    }
    if (e.key == null) {
      e.key = key.clone();
    }
    return hold(node, e);
  }

  /**
   * Holds {@code node}, which a region reader or grant names, until the returned hold is closed:
   * the key a connection proved for it stays the only one, or, if none has yet, the first to
   * prove it will be. {@link Transport#ANY_PEER} and {@link Transport#GRANTED_ONLY} name no node
   * and hold nothing.
   */
  public synchronized Hold name(long node) {
    if (node == Transport.ANY_PEER || node == Transport.GRANTED_ONLY) {
      return NOTHING;
    }
    return hold(node, held.computeIfAbsent(node, n -> new Entry()));
  }

  /** The key a connection proved for {@code node}, while something holds it; a copy. */
  public synchronized Optional<byte[]> keyOf(long node) {
    Entry e = held.get(node);
    return e == null || e.key == null ? Optional.empty() : Optional.of(e.key.clone());
  }

  /** Node ids held now. */
  public synchronized int size() {
    return held.size();
  }

  private Hold hold(long node, Entry e) {
    e.holds++;
    AtomicBoolean closed = new AtomicBoolean();
    return () -> {
      if (closed.compareAndSet(false, true)) {
        release(node, e);
      }
    };
  }

  private synchronized void release(long node, Entry e) {
    if (--e.holds == 0) {
      held.remove(node, e);
    }
  }
}
