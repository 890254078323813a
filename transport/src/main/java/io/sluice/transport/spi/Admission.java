package io.sluice.transport.spi;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;

/**
 * Bounds on accepted connections that have not authenticated yet. Per source address, a
 * connection beyond the bound is refused, so one host cannot take all the room; globally, the
 * oldest unauthenticated connection is dropped to make room for a new one, so a flood from many
 * addresses can delay an honest handshake (which needs one round trip) but cannot lock it out
 * for a whole handshake deadline.
 *
 * <p>Thread safe: the acceptor admits, any thread reports an end. The caller closes the
 * connection that {@link #admit} names as evicted, outside this object.
 */
final class Admission<C> {
  private final int global;
  private final int perAddress;
  private final LinkedHashSet<C> waiting = new LinkedHashSet<>();
  private final Map<C, InetAddress> addressOf = new HashMap<>();
  private final Map<InetAddress, Integer> perSource = new HashMap<>();

  /** What admission decided for a new connection. */
  record Decision<C>(boolean admitted, Optional<C> evicted) {}

  Admission(int global, int perAddress) {
    if (global <= 0 || perAddress <= 0) {
      throw new IllegalArgumentException("bounds must be positive: " + global + ", " + perAddress);
    }
    this.global = global;
    this.perAddress = perAddress;
  }

  /** Counts {@code c} from {@code source} as unauthenticated, or refuses it. */
  synchronized Decision<C> admit(C c, InetAddress source) {
    int fromSource = perSource.getOrDefault(source, 0);
    if (fromSource >= perAddress) {
      return new Decision<>(false, Optional.empty());
    }
    Optional<C> evicted = Optional.empty();
    if (waiting.size() >= global) {
      C oldest = waiting.iterator().next();
      forget(oldest);
      evicted = Optional.of(oldest);
    }
    waiting.add(c);
    addressOf.put(c, source);
    perSource.merge(source, 1, Integer::sum);
    return new Decision<>(true, evicted);
  }

  /** {@code c} authenticated or closed; it no longer counts. Idempotent. */
  synchronized void done(C c) {
    forget(c);
  }

  private void forget(C c) {
    if (waiting.remove(c)) {
      InetAddress a = addressOf.remove(c);
      perSource.computeIfPresent(a, (k, n) -> n <= 1 ? null : n - 1);
    }
  }

  synchronized int waiting() {
    return waiting.size();
  }

  synchronized int waitingFrom(InetAddress source) {
    return perSource.getOrDefault(source, 0);
  }
}
