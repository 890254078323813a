package io.sluice.transport.carrier;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The request memory all sessions of a carrier share ({@code maxQueuedRequestBytes}), handed out
 * in turn. A session whose request does not fit waits in line, and while anyone waits so does
 * every session that asks after it, however little it asks for. Memory that returns goes to the
 * first in line as soon as its request fits: it is set aside for that session, which is resumed
 * to take it. So the session that has waited longest is served next, and one that holds most of
 * the memory cannot take what returns again and again ahead of the others.
 *
 * <p>A request larger than the whole budget (possible when the budget is set below {@code
 * maxMessageBytes}) is let in when it is first in line and nothing else is held, alone.
 *
 * <p>Waiting in line is not the waiting session's doing: it must not count as that peer
 * stalling (see {@link SessionSocket.Receiver#waitsItsTurn}).
 *
 * <p>Thread safe: selector threads take, handler threads give back, any thread forgets a session
 * that closed. {@code resume} runs outside the lock.
 *
 * @param <S> a session
 */
final class SharedRequestMemory<S> {
  private final long capacity;
  private final Consumer<S> resume;
  private long free;
  /** Sessions waiting, in the order they came, with the bytes each asked for. */
  private final LinkedHashMap<S, Integer> line = new LinkedHashMap<>();
  /** Bytes set aside for sessions whose turn came, until they take them (or close). */
  private final Map<S, Integer> setAside = new HashMap<>();

  /**
   * @param capacity bytes all sessions together may hold
   * @param resume what to do with a session whose turn came: resume its reading, so that it asks again
   */
  SharedRequestMemory(long capacity, Consumer<S> resume) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity must be positive: " + capacity);
    }
    this.capacity = capacity;
    this.free = capacity;
    this.resume = resume;
  }

  /**
   * Takes {@code n} bytes for {@code s}: those set aside for it if its turn came, else free ones if
   * nobody waits and they suffice. If not, {@code s} waits in line (keeping its place if it was
   * already there) and is resumed when its turn comes; it then asks again.
   *
   * @return whether {@code s} holds {@code n} more bytes now
   */
  boolean take(S s, int n) {
    List<S> turns;
    boolean taken;
    synchronized (this) {
      Integer kept = setAside.remove(s);
      if (kept != null) {
        free += kept; // its turn: what was kept for it is its own, ahead of the line
        taken = true;
        free -= n;
      } else if (line.isEmpty() && fits(n)) {
        taken = true;
        free -= n;
      } else {
        taken = false;
        line.putIfAbsent(s, n);
      }
      turns = handOut();
    }
    turns.forEach(resume);
    return taken;
  }

  /** Returns {@code n} bytes taken with {@link #take}; whoever is first in line gets them as they suffice. */
  void give(long n) {
    List<S> turns;
    synchronized (this) {
      free += n;
      turns = handOut();
    }
    turns.forEach(resume);
  }

  /** {@code s} closed: it leaves the line, and bytes set aside for it return. Idempotent. */
  void forget(S s) {
    List<S> turns;
    synchronized (this) {
      line.remove(s);
      Integer kept = setAside.remove(s);
      if (kept != null) {
        free += kept;
      }
      turns = handOut();
    }
    turns.forEach(resume);
  }

  /** Whether {@code n} bytes may be taken now: they are free, or nothing is held and they exceed the whole budget. */
  private boolean fits(long n) {
    return n <= free || free == capacity;
  }

  /** Sets memory aside for the first in line while their requests fit; returns the sessions to resume. */
  private List<S> handOut() {
    List<S> turns = List.of();
    for (Iterator<Map.Entry<S, Integer>> it = line.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<S, Integer> first = it.next();
      if (!fits(first.getValue())) {
        break;
      }
      free -= first.getValue();
      setAside.put(first.getKey(), first.getValue());
      it.remove();
      if (turns.isEmpty()) {
        turns = new ArrayList<>();
      }
      turns.add(first.getKey());
    }
    return turns;
  }

  /** Sessions waiting in line now. */
  synchronized int waiting() {
    return line.size();
  }

  /** Bytes free now: neither held nor set aside (negative while a request larger than the budget is held). */
  synchronized long free() {
    return free;
  }
}
