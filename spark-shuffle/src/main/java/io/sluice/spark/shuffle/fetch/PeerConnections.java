package io.sluice.spark.shuffle.fetch;

import io.sluice.transport.Connection;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.PeerClosedException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;

/**
 * This executor's connections to its peer executors, shared by every reduce task, at most {@code
 * maxConnections} open (or being opened) at once however many peers there are: at most one per
 * peer, opened on first use, opened again once it failed, was closed, or a task discarded it after
 * a failure.
 *
 * <p>A connection is only ever used through {@link #use}, which holds a lease on it for exactly
 * one transport operation (a range request, a batch of READs, a view) and gives the lease back
 * when that operation's future completes; a connection without leases is idle. When a peer needs
 * a connection and the bound is reached, an idle connection is closed for it; if every connection
 * is in use, the use waits in line (first come, first served) and one connection stops taking new
 * leases so that it becomes idle as its operations end (one such draining connection per waiting
 * use). A wait ends after {@code waitDeadlineMs} with a {@link PeerConnectionsBusyException}.
 *
 * <p>Which connection is closed or drained: one to a peer no task {@linkplain #expect expects} to
 * use again soon, the least recently used of those; only when every candidate is expected, the
 * least recently used expected one. A reduce task expects the peers it has asked for ranges and
 * not finished reading, so a connection it opened for a range request is still there for that
 * peer's READs; least recently used alone would close exactly those, since a
 * task that reads its peers in turn touches the peer it reads next least recently. An expectation
 * only orders the choice: it holds no lease and makes no one wait.
 *
 * <p>Why no wait lasts forever: a lease is held by an operation, never by a task waiting for
 * another lease, and every transport operation ends within the transport's own deadlines (connect,
 * then I/O), so a draining connection becomes idle without anyone's help; and every wait has its
 * deadline besides.
 *
 * <p>The time from asking to a usable connection is reported for the first connection to each
 * peer (the cold one: the handshake's first signatures, the first shm attach), for at most {@link
 * #MAX_TIMED_PEERS} peers.
 *
 * <p>Thread safe. Owns the connections it opened; {@link #close} closes them, including those
 * still being opened (when they complete), and fails the uses still waiting.
 */
public final class PeerConnections implements AutoCloseable {
  /** Peers whose first connection is timed; later peers connect untimed. */
  public static final int MAX_TIMED_PEERS = 65_536;

  /**
   * The bound and what it did: how many connections are open or being opened now, the most there
   * ever were at once, how many uses had to wait for room, how many of those waits ended at their
   * deadline, how many idle connections were closed to make room, and how many peers reduce tasks
   * read through another path because the bound had no room for them ({@link #choose}).
   */
  public record Stats(int bound, int open, int peak, long waits, long waitTimeouts, long evictions,
      long passedOn) {}

  /** One connection, open or being opened, and who uses it. Guarded by the PeerConnections. */
  private static final class Slot {
    final NodeAddress peer;
    final CompletableFuture<Connection> connection = new CompletableFuture<>();
    int leases;
    long lastUsed;
    boolean draining;
    boolean removed;

    Slot(NodeAddress peer) {
      this.peer = peer;
    }

    boolean dead() {
      return connection.isCompletedExceptionally() || (connection.isDone() && !connection.join().isOpen());
    }

    boolean idle() {
      return leases == 0 && connection.isDone();
    }
  }

  /** A use waiting for room. */
  private static final class Waiter {
    final NodeAddress peer;
    final CompletableFuture<Slot> granted = new CompletableFuture<>();
    ScheduledFuture<?> deadline;

    Waiter(NodeAddress peer) {
      this.peer = peer;
    }
  }

  private final Function<NodeAddress, CompletableFuture<Connection>> connect;
  private final LongConsumer firstConnectNanos;
  private final int maxConnections;
  private final long waitDeadlineMs;
  private final Set<NodeAddress> connectedOnce = ConcurrentHashMap.newKeySet();
  // Everything below is guarded by this.
  private final Map<NodeAddress, Slot> slots = new HashMap<>();
  /** How many expectations are open per peer, whether or not it has a connection now. */
  private final Map<NodeAddress, Integer> expected = new HashMap<>();
  /**
   * The order in which connections are given up for others: those no task expects first, then the
   * least recently used. Used under the lock.
   */
  private final Comparator<Slot> closingOrder =
      Comparator.comparing((Slot s) -> expected.containsKey(s.peer)).thenComparingLong(s -> s.lastUsed);
  private final Deque<Waiter> waiters = new ArrayDeque<>();
  private ScheduledThreadPoolExecutor deadlines; // made for the first wait
  private long clock;
  private int peak;
  private long waits;
  private long waitTimeouts;
  private long evictions;
  private long passedOn;
  private boolean closed;

  /**
   * @param connect opens a connection to a peer (the transport's {@code connect})
   * @param maxConnections connections open or being opened at once, at least 1
   * @param waitDeadlineMs how long a use waits for room at most
   * @param firstConnectNanos told how long each peer's first usable connection took, on the
   *     thread that completed it
   */
  public PeerConnections(Function<NodeAddress, CompletableFuture<Connection>> connect, int maxConnections,
      long waitDeadlineMs, LongConsumer firstConnectNanos) {
    if (maxConnections < 1) {
      throw new IllegalArgumentException("maxConnections must be at least 1, not " + maxConnections);
    }
    if (waitDeadlineMs < 1) {
      throw new IllegalArgumentException("waitDeadlineMs must be positive, not " + waitDeadlineMs);
    }
    this.connect = connect;
    this.maxConnections = maxConnections;
    this.waitDeadlineMs = waitDeadlineMs;
    this.firstConnectNanos = firstConnectNanos;
  }

  /**
   * Runs one transport operation on the peer's connection, opening one if there is none usable
   * (after making room under the bound, or waiting for it), and holds the connection's lease until
   * the operation's future completes.
   *
   * @param operation issues the operation on the connection; it must not wait for anything
   * @return the operation's result; fails with the connection's failure if it could not be opened,
   *     with {@link PeerConnectionsBusyException} if there was no room before the deadline, or as
   *     the operation failed
   */
  public <T> CompletableFuture<T> use(NodeAddress peer, Function<Connection, CompletableFuture<T>> operation) {
    return lease(peer).thenCompose(slot -> slot.connection.thenCompose(operation)
        .whenComplete((result, failure) -> release(slot)));
  }

  /** A lease on the peer's connection, granted now, once there is room, or never (then failed). */
  private CompletableFuture<Slot> lease(NodeAddress peer) {
    List<Runnable> after = new ArrayList<>();
    Waiter w = new Waiter(peer);
    synchronized (this) {
      if (closed) {
        w.granted.completeExceptionally(new PeerClosedException("the executor's peer connections are closed"));
        return w.granted;
      }
      waiters.add(w);
      serveWaiters(after);
      if (waiters.contains(w)) {
        waits++;
        w.deadline = deadlines().schedule(() -> timeOut(w), waitDeadlineMs, TimeUnit.MILLISECONDS);
      }
    }
    after.forEach(Runnable::run);
    return w.granted;
  }

  private ScheduledThreadPoolExecutor deadlines() {
    assert Thread.holdsLock(this);
    if (deadlines == null) {
      deadlines = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "sluice-peer-connection-deadlines");
        t.setDaemon(true);
        return t;
      });
      deadlines.setRemoveOnCancelPolicy(true);
    }
    return deadlines;
  }

  private void timeOut(Waiter w) {
    List<Runnable> after = new ArrayList<>();
    synchronized (this) {
      if (!waiters.remove(w)) {
        return; // granted meanwhile
      }
      waitTimeouts++;
      balanceDraining();
    }
    w.granted.completeExceptionally(new PeerConnectionsBusyException("no connection to " + w.peer + " within "
        + waitDeadlineMs + " ms: all " + maxConnections + " of this executor's connections to peers (the bound"
        + " spark.shuffle.rdma.maxPeerConnections) stayed in use"));
    after.forEach(Runnable::run);
  }

  private void release(Slot slot) {
    List<Runnable> after = new ArrayList<>();
    synchronized (this) {
      slot.leases--;
      slot.lastUsed = ++clock;
      serveWaiters(after);
    }
    after.forEach(Runnable::run);
  }

  /**
   * Grants waiting uses what the connections allow now: a usable connection to their peer, a new
   * one where the bound leaves room or an idle one can be closed for it; then makes as many
   * connections drain as uses are still waiting. Runs under the lock; what must run outside it
   * (completing futures, connecting, closing) goes to {@code after}.
   */
  private void serveWaiters(List<Runnable> after) {
    assert Thread.holdsLock(this);
    for (Iterator<Slot> it = slots.values().iterator(); it.hasNext(); ) {
      Slot s = it.next();
      if (s.dead()) {
        it.remove();
        forget(s, after);
      }
    }
    for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
      Waiter w = it.next();
      Slot s = slots.get(w.peer);
      if (s != null && !s.draining) {
        it.remove();
        grant(w, s, after);
      }
    }
    while (!waiters.isEmpty()) {
      Waiter w = waiters.peek();
      Slot existing = slots.get(w.peer);
      if (existing != null) {
        // Draining for a use behind this one, or for none any more: the first in line takes it back.
        existing.draining = false;
        waiters.poll();
        grant(w, existing, after);
        continue;
      }
      if (slots.size() >= maxConnections) {
        Slot idle = first(Slot::idle, closingOrder);
        if (idle == null) {
          break;
        }
        slots.remove(idle.peer);
        forget(idle, after);
        evictions++;
      }
      waiters.poll();
      grant(w, open(w.peer, after), after);
    }
    balanceDraining();
  }

  /** As many connections draining as uses waiting, the least recently used first. */
  private void balanceDraining() {
    assert Thread.holdsLock(this);
    long draining = slots.values().stream().filter(s -> s.draining).count();
    while (draining < waiters.size()) {
      Slot s = first(x -> !x.draining, closingOrder);
      if (s == null) {
        return;
      }
      s.draining = true;
      draining++;
    }
    while (draining > waiters.size()) {
      first(s -> s.draining, closingOrder.reversed()).draining = false;
      draining--;
    }
  }

  /** The first slot in {@code order} among those {@code which} accepts, or null. */
  private Slot first(Predicate<Slot> which, Comparator<Slot> order) {
    return slots.values().stream().filter(which).min(order).orElse(null);
  }

  private void grant(Waiter w, Slot s, List<Runnable> after) {
    s.leases++;
    s.lastUsed = ++clock;
    after.add(() -> {
      if (w.deadline != null) {
        w.deadline.cancel(false);
      }
      w.granted.complete(s);
    });
  }

  /** A new slot for the peer, counted now; the connect itself runs after the lock is let go. */
  private Slot open(NodeAddress peer, List<Runnable> after) {
    assert Thread.holdsLock(this) && slots.size() < maxConnections;
    Slot s = new Slot(peer);
    s.lastUsed = ++clock;
    slots.put(peer, s);
    peak = Math.max(peak, slots.size());
    after.add(() -> {
      long asked = System.nanoTime();
      CompletableFuture<Connection> f;
      try {
        f = connect.apply(peer);
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      f.whenComplete((c, e) -> {
        if (e != null) {
          s.connection.completeExceptionally(e);
        } else {
          if (connectedOnce.size() < MAX_TIMED_PEERS && connectedOnce.add(peer)) {
            firstConnectNanos.accept(System.nanoTime() - asked);
          }
          s.connection.complete(c);
        }
        connected(s);
      });
    });
    return s;
  }

  /** A connection finished opening: it may be idle now (opened ahead), or dead; or this is closed. */
  private void connected(Slot s) {
    List<Runnable> after = new ArrayList<>();
    synchronized (this) {
      if (!s.removed) {
        serveWaiters(after);
      }
    }
    after.forEach(Runnable::run);
  }

  /** Takes a slot out of the count (the caller removed it from the table) and closes its connection. */
  private static void forget(Slot s, List<Runnable> after) {
    s.removed = true;
    s.draining = false;
    after.add(() -> s.connection.thenAccept(Connection::close));
  }

  /**
   * Starts connecting to at most {@code max} of {@code peers} that have no connection open or
   * being opened, without waiting, and only where the bound leaves room: it never closes a
   * connection for them, nor takes room a waiting use needs. A reduce task calls it as soon as it
   * knows whom it will read, so the handshakes run while it decides how to read and reads its local
   * blocks. The connections are the shared ones {@link #use} uses, owned and closed here like them.
   *
   * @return how many connections it started
   */
  public int connectAhead(Collection<NodeAddress> peers, int max) {
    List<Runnable> after = new ArrayList<>();
    int started = 0;
    synchronized (this) {
      for (NodeAddress peer : new LinkedHashSet<>(peers)) {
        if (started >= max || closed || !waiters.isEmpty()) {
          break;
        }
        Slot existing = slots.get(peer);
        if (existing != null && !existing.dead()) {
          continue;
        }
        if (existing != null) {
          slots.remove(peer);
          forget(existing, after);
        }
        if (slots.size() >= maxConnections) {
          break;
        }
        open(peer, after);
        started++;
      }
    }
    after.forEach(Runnable::run);
    return started;
  }

  /**
   * Says that a task will use {@code peer} again soon, until the returned expectation is closed
   * (once; closing it again does nothing): while it is open, a connection to the peer is closed or
   * drained for another peer only if every other candidate is expected too.
   */
  public Expectation expect(NodeAddress peer) {
    synchronized (this) {
      expected.merge(peer, 1, Integer::sum);
    }
    return new Expectation(peer);
  }

  /** A task's word that it will use a peer soon; see {@link #expect}. Closing it is idempotent. */
  public final class Expectation implements AutoCloseable {
    private final NodeAddress peer;
    private boolean closed;

    private Expectation(NodeAddress peer) {
      this.peer = peer;
    }

    @Override
    public void close() {
      synchronized (PeerConnections.this) {
        if (closed) {
          return;
        }
        closed = true;
        expected.computeIfPresent(peer, (p, n) -> n == 1 ? null : n - 1);
      }
    }
  }

  /** Whether the peer has a connection open or being opened (not one known to have failed). */
  public synchronized boolean connected(NodeAddress peer) {
    Slot s = slots.get(peer);
    return s != null && !s.dead();
  }

  /**
   * Which of a task's peers it reads over connections of this bound, the others to be read through
   * another path: as many as the bound has room for beside what other tasks hold (connections in
   * use or expected, to peers not among these; a connection that is only idle counts as room), none
   * where others hold the whole bound; those with a connection open or being opened, or that
   * another task is about to read, first, then the others, each group in the order given (the
   * caller's preference). Tasks that read the same peers share their connections, so they take no
   * room from each other. The rest are counted as passed on ({@link
   * Stats#passedOn}). Choosing reserves nothing: the uses that follow take connections as any use
   * does, so tasks choosing at once may still wait for room or close idle connections.
   *
   * @return the chosen peers, in the order given
   */
  public synchronized Set<NodeAddress> choose(List<NodeAddress> peers) {
    Set<NodeAddress> distinct = new LinkedHashSet<>(peers);
    Set<NodeAddress> others = new HashSet<>(expected.keySet());
    for (Slot s : slots.values()) {
      if (s.leases > 0) {
        others.add(s.peer);
      }
    }
    others.removeAll(distinct);
    int room = Math.max(0, maxConnections - others.size());
    int asked = distinct.size();
    Set<NodeAddress> chosen = new HashSet<>();
    for (NodeAddress p : distinct) {
      if (chosen.size() < room && (connected(p) || expected.containsKey(p))) {
        chosen.add(p);
      }
    }
    for (NodeAddress p : distinct) {
      if (chosen.size() < room) {
        chosen.add(p);
      }
    }
    distinct.retainAll(chosen); // in the order given
    passedOn += asked - distinct.size();
    return distinct;
  }

  /**
   * Forgets a connection that failed, and closes it, so the next use reconnects; a connection to
   * the peer that has replaced it already is left alone. Uses of it still in flight fail.
   */
  public void discard(NodeAddress peer, Connection failed) {
    List<Runnable> after = new ArrayList<>();
    synchronized (this) {
      Slot s = slots.get(peer);
      if (s != null && s.connection.isDone() && !s.connection.isCompletedExceptionally()
          && s.connection.join() == failed) {
        slots.remove(peer);
        forget(s, after);
        serveWaiters(after);
      }
    }
    after.forEach(Runnable::run);
  }

  /** The bound and what it did so far. */
  public synchronized Stats stats() {
    return new Stats(maxConnections, slots.size(), peak, waits, waitTimeouts, evictions, passedOn);
  }

  @Override
  public void close() {
    List<Slot> open;
    List<Waiter> waiting;
    synchronized (this) {
      closed = true;
      open = new ArrayList<>(slots.values());
      slots.clear();
      waiting = new ArrayList<>(waiters);
      waiters.clear();
      if (deadlines != null) {
        deadlines.shutdownNow();
      }
      open.forEach(s -> s.removed = true);
    }
    for (Slot s : open) {
      s.connection.thenAccept(Connection::close);
    }
    for (Waiter w : waiting) {
      w.granted.completeExceptionally(new PeerClosedException("the executor's peer connections were closed"));
    }
  }
}
