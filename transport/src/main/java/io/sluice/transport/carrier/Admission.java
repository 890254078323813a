package io.sluice.transport.carrier;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;

/**
 * Bounds on accepted connections that have not authenticated yet. Per source network (an IPv4
 * /24, an IPv6 /64: what one party easily holds many addresses of), a new connection beyond the
 * bound pushes out one of that network's own waiting ones, so one host or subnet cannot take all the
 * room, nor lock out the honest clients that share its network. Globally, a new
 * connection at the bound makes room by dropping a waiting one chosen at random: first among
 * those that have not even sent their HELLO (an honest client sends it at once), only then among
 * those waiting for the rest of their handshake. Never the oldest: with oldest-first, a flood of
 * rate r gives every connection exactly {@code bound / r} seconds, and an honest handshake slower
 * than that (a long link, a loaded peer) never completes; chosen at random, it survives with a
 * chance that only shrinks with the flood, and a client that said HELLO outlives every silent
 * socket.
 *
 * <p>Thread safe: the acceptor admits, selector threads report HELLOs, any thread reports an
 * end. The caller closes the connection that {@link #admit} names as evicted, outside this
 * object.
 */
final class Admission<C> {
  private final int global;
  private final int perAddress;
  private final IntUnaryOperator random;
  /** Waiting connections that have not sent HELLO, then those that have. */
  private final Pool<C> silent = new Pool<>();
  private final Pool<C> greeted = new Pool<>();
  private final Map<C, SourceNetwork> addressOf = new HashMap<>();
  private final Map<SourceNetwork, Integer> perSource = new HashMap<>();

  /** What admission decided for a new connection. */
  record Decision<C>(boolean admitted, Optional<C> evicted) {}

  Admission(int global, int perAddress) {
    this(global, perAddress, new SplittableRandom()::nextInt);
  }

  /** @param random given n, a number in [0, n): which waiting connection to drop */
  Admission(int global, int perAddress, IntUnaryOperator random) {
    if (global <= 0 || perAddress <= 0) {
      throw new IllegalArgumentException("bounds must be positive: " + global + ", " + perAddress);
    }
    this.global = global;
    this.perAddress = perAddress;
    this.random = random;
  }

  /** Counts {@code c} from {@code source} as unauthenticated, or refuses it. */
  synchronized Decision<C> admit(C c, InetAddress address) {
    SourceNetwork source = SourceNetwork.of(address);
    int fromSource = perSource.getOrDefault(source, 0);
    Optional<C> evicted = Optional.empty();
    if (fromSource >= perAddress) {
      // The network is at its bound: one of its own waiting connections makes room, chosen as
      // the global bound chooses (silent ones first, at random), so a flood from one address
      // cannot lock the honest clients of its network out, and never takes room from others.
      Optional<C> victim = pick(source, silent).or(() -> pick(source, greeted));
      if (victim.isEmpty()) {
        return new Decision<>(false, Optional.empty());
      }
      forget(victim.get());
      evicted = victim;
    } else if (waiting() >= global) {
      Pool<C> from = silent.size() > 0 ? silent : greeted;
      C victim = from.get(random.applyAsInt(from.size()));
      forget(victim);
      evicted = Optional.of(victim);
    }
    silent.add(c);
    addressOf.put(c, source);
    perSource.merge(source, 1, Integer::sum);
    return new Decision<>(true, evicted);
  }

  /** A random waiting connection of {@code source} in {@code pool}, if it holds any. */
  private Optional<C> pick(SourceNetwork source, Pool<C> pool) {
    List<C> mine = new ArrayList<>();
    for (int i = 0; i < pool.size(); i++) {
      C w = pool.get(i);
      if (source.equals(addressOf.get(w))) {
        mine.add(w);
      }
    }
    return mine.isEmpty() ? Optional.empty() : Optional.of(mine.get(random.applyAsInt(mine.size())));
  }

  /** {@code c} sent a well-formed HELLO: it is dropped only when no silent connection is left. */
  synchronized void greeted(C c) {
    if (silent.remove(c)) {
      greeted.add(c);
    }
  }

  /** {@code c} authenticated or closed; it no longer counts. Idempotent. */
  synchronized void done(C c) {
    forget(c);
  }

  private void forget(C c) {
    if (silent.remove(c) || greeted.remove(c)) {
      SourceNetwork a = addressOf.remove(c);
      perSource.computeIfPresent(a, (k, n) -> n <= 1 ? null : n - 1);
    }
  }

  synchronized int waiting() {
    return silent.size() + greeted.size();
  }

  synchronized int waitingFrom(InetAddress address) {
    return perSource.getOrDefault(SourceNetwork.of(address), 0);
  }

  /**
   * The network an address counts against: its first 24 bits for IPv4 (IPv4-mapped IPv6
   * included), its first 64 for IPv6.
   */
  record SourceNetwork(long prefix, boolean v6) {
    static SourceNetwork of(InetAddress a) {
      byte[] b = a.getAddress();
      if (b.length == 16 && isV4Mapped(b)) {
        b = java.util.Arrays.copyOfRange(b, 12, 16);
      }
      if (b.length == 4) {
        return new SourceNetwork(((b[0] & 0xffL) << 16) | ((b[1] & 0xffL) << 8) | (b[2] & 0xffL), false);
      }
      long p = 0;
      for (int i = 0; i < 8; i++) {
        p = (p << 8) | (b[i] & 0xffL);
      }
      return new SourceNetwork(p, true);
    }

    private static boolean isV4Mapped(byte[] b) {
      for (int i = 0; i < 10; i++) {
        if (b[i] != 0) {
          return false;
        }
      }
      return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    }

    // Written out rather than generated: a record's own equals and hashCode bootstrap through
    // java.lang.runtime.ObjectMethods, which a cold JVM would pay for inside the first accept.
    @Override
    public boolean equals(Object o) {
      return o instanceof SourceNetwork n && n.prefix == prefix && n.v6 == v6;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(prefix) * 31 + (v6 ? 1 : 0);
    }
  }

  /** A set with removal and pick by position in constant time (the last element fills a hole). */
  private static final class Pool<C> {
    private final List<C> items = new ArrayList<>();
    private final Map<C, Integer> at = new HashMap<>();

    void add(C c) {
      at.put(c, items.size());
      items.add(c);
    }

    boolean remove(C c) {
      Integer i = at.remove(c);
      if (i == null) {
        return false;
      }
      C last = items.remove(items.size() - 1);
      if (last != c) {
        items.set(i, last);
        at.put(last, i);
      }
      return true;
    }

    C get(int i) {
      return items.get(i);
    }

    int size() {
      return items.size();
    }
  }
}
