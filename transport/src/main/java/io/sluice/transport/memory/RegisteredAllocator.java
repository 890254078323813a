package io.sluice.transport.memory;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;

/**
 * A tree of registered memory over one {@link Transport}: the {@linkplain #root root} and its
 * {@linkplain #newChild children} hand out regions that the transport registered ({@link
 * Transport#allocateFor}), so every byte stays readable by peers and usable as a READ
 * destination, while each node accounts for what it and its descendants hold, bounds it by its
 * limit, keeps released regions for reuse, and lets a caller wait (until a deadline) for room.
 *
 * <p>Ownership: a region from {@link #allocate} belongs to the caller until it goes back through
 * {@link #release} (kept for the next request, or freed) or {@link #free} (freed, never reused:
 * for a region a failed READ may still write into). The caller does not close it directly. Idle
 * regions belong to the allocator; closing it frees them. {@link #close()} fails, naming the
 * allocator and the count and sizes of the regions still out, when any are, as a leak check;
 * {@link #shutdown()} is the close for owners whose regions may legitimately outlive them (in a
 * consumer's buffers): those are freed when they come back.
 *
 * <p>Thread safe. One lock, shared by the whole tree, guards the accounting of every node, so a
 * limit is checked against its ancestors' in one step; registering and freeing memory happen
 * outside it.
 */
public final class RegisteredAllocator implements AutoCloseable {
  private static final int SIZES_LISTED = 16;

  private final String name;
  private final RegisteredAllocator parent;
  private final Transport transport;
  private final Object lock;
  private final AllocatorOptions options;
  private final Map<RegisteredRegion, Long> outstanding = new IdentityHashMap<>(); // guarded by lock
  private final TreeMap<Long, ArrayDeque<RegisteredRegion>> idle = new TreeMap<>(); // guarded by lock
  private final Set<RegisteredAllocator> children = new LinkedHashSet<>(); // guarded by lock
  private long allocated; // bytes held by this node and its descendants, idle included; guarded by lock
  private long peak; // guarded by lock
  private long idleBytes; // guarded by lock
  private int idleCount; // guarded by lock
  private int waiting; // threads waiting for this node to have room; guarded by lock
  private boolean closed; // guarded by lock

  private RegisteredAllocator(String name, RegisteredAllocator parent, Transport transport, Object lock,
      AllocatorOptions options) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("an allocator needs a name");
    }
    this.name = name;
    this.parent = parent;
    this.transport = transport;
    this.lock = lock;
    this.options = options;
  }

  /** The root of a new tree over {@code transport}, with the given limit, reader and reuse. */
  public static RegisteredAllocator root(String name, Transport transport, AllocatorOptions options) {
    if (transport == null) {
      throw new IllegalArgumentException("allocator '" + name + "' needs a transport");
    }
    return new RegisteredAllocator(name, null, transport, new Object(), options);
  }

  /** The root of a new tree over {@code transport}: no limit, no reuse. */
  public static RegisteredAllocator root(String name, Transport transport) {
    return root(name, transport, AllocatorOptions.DEFAULTS);
  }

  /**
   * A child whose regions count against this allocator too.
   *
   * @throws IllegalStateException if this allocator is closed
   */
  public RegisteredAllocator newChild(String childName, AllocatorOptions childOptions) {
    synchronized (lock) {
      checkOpen();
      RegisteredAllocator child = new RegisteredAllocator(childName, this, transport, lock, childOptions);
      children.add(child);
      return child;
    }
  }

  public String name() {
    return name;
  }

  public AllocatorOptions options() {
    return options;
  }

  /** This allocator's own limit; its ancestors' limits bound it too. */
  public long limit() {
    return options.limit();
  }

  /**
   * A region of at least {@code length} bytes, at once: an idle one that fits, or a fresh
   * registration. Its contents are unspecified.
   *
   * @throws MemoryLimitException if this allocator or an ancestor is full
   * @throws IllegalArgumentException if {@code length} exceeds a limit of the tree or 2 GiB
   * @throws IllegalStateException if the allocator is closed
   * @throws TransportException if the transport cannot register the memory
   */
  public RegisteredRegion allocate(long length) throws TransportException {
    try {
      return allocate(length, false, 0);
    } catch (TimeoutException | InterruptedException e) {
      throw new IllegalStateException("an allocation that never waits waited", e);
    }
  }

  /**
   * Like {@link #allocate(long)}, but when the tree has no room, first frees the idle regions in
   * the way, then waits for regions to come back until {@code deadlineNanos} ({@link
   * System#nanoTime()}).
   *
   * @throws TimeoutException if no room came free before the deadline
   */
  public RegisteredRegion allocate(long length, long deadlineNanos)
      throws TransportException, TimeoutException, InterruptedException {
    return allocate(length, true, deadlineNanos);
  }

  private RegisteredRegion allocate(long length, boolean wait, long deadlineNanos)
      throws TransportException, TimeoutException, InterruptedException {
    if (length < 0) {
      throw new IllegalArgumentException("allocator '" + name + "' was asked for " + length + " bytes");
    }
    List<RegisteredRegion> reclaimed = new ArrayList<>();
    long size;
    try {
      synchronized (lock) {
        checkOpen();
        RegisteredRegion reused = takeIdle(length, reclaimed);
        if (reused != null) {
          return reused;
        }
        size = sizeFor(length);
        reserve(size, wait, deadlineNanos, reclaimed);
      }
    } finally {
      reclaimed.forEach(RegisteredRegion::close);
    }
    RegisteredRegion region;
    try {
      region = transport.allocateFor(options.reader(), (int) size);
    } catch (TransportException | RuntimeException e) {
      synchronized (lock) {
        uncharge(size);
      }
      throw e;
    }
    synchronized (lock) {
      if (!closedHere()) {
        outstanding.put(region, size);
        return region;
      }
      uncharge(size);
    }
    region.close();
    throw new IllegalStateException("allocator '" + name + "' was closed while it registered a region");
  }

  /**
   * Takes back a region from {@link #allocate}: kept idle for the next request when this
   * allocator reuses regions of its size and has idle room, nobody waits for room that freeing
   * it would make (in this allocator or an ancestor), and the region is still open; freed
   * otherwise.
   *
   * @throws IllegalArgumentException if the region is not out from this allocator
   */
  public void release(RegisteredRegion region) {
    long size;
    synchronized (lock) {
      size = takeOutstanding(region);
      if (!closedHere() && region.isOpen() && options.sizes().keeps(size)
          && idleBytes + size <= options.maxIdleBytes() && !waitedOn()) {
        idle.computeIfAbsent(size, s -> new ArrayDeque<>()).addLast(region);
        idleBytes += size;
        idleCount++;
        return;
      }
      uncharge(size);
    }
    region.close();
  }

  /**
   * Takes back a region from {@link #allocate} and frees it (revoking its key), never to be
   * reused: for a region that a READ which failed or timed out may still write into.
   *
   * @throws IllegalArgumentException if the region is not out from this allocator
   */
  public void free(RegisteredRegion region) {
    synchronized (lock) {
      uncharge(takeOutstanding(region));
    }
    region.close();
  }

  /** Bytes this allocator and its descendants hold now: regions out and idle ones. */
  public long allocatedBytes() {
    synchronized (lock) {
      return allocated;
    }
  }

  /** The most bytes this allocator and its descendants ever held at once. */
  public long peakBytes() {
    synchronized (lock) {
      return peak;
    }
  }

  /** Regions of this allocator out with their users. */
  public int outstandingCount() {
    synchronized (lock) {
      return outstanding.size();
    }
  }

  /** Regions of this allocator waiting for reuse (they are live registrations of the transport). */
  public int idleCount() {
    synchronized (lock) {
      return idleCount;
    }
  }

  /** True once this allocator or an ancestor was closed or shut down: it hands out nothing more. */
  public boolean isClosed() {
    synchronized (lock) {
      return closedHere();
    }
  }

  /** True while some thread waits for room in this allocator or one of its descendants. */
  public boolean hasWaiters() {
    synchronized (lock) {
      return waitersInSubtree() > 0;
    }
  }

  /**
   * Stops handing out regions and frees the idle ones; regions still out are freed when they come
   * back, and the allocator leaves its parent then.
   *
   * @return how many regions of this allocator and its descendants were still out
   */
  public int shutdown() {
    List<RegisteredRegion> toFree = new ArrayList<>();
    int out;
    synchronized (lock) {
      out = closeLocked(toFree);
    }
    toFree.forEach(RegisteredRegion::close);
    return out;
  }

  /**
   * Like {@link #shutdown()}, and then fails if anything was still out.
   *
   * @throws IllegalStateException naming this allocator and each descendant with regions still
   *     out, with their count and sizes
   */
  @Override
  public void close() {
    List<RegisteredRegion> toFree = new ArrayList<>();
    String leaks;
    synchronized (lock) {
      closeLocked(toFree);
      StringBuilder report = new StringBuilder();
      describeOutstanding(report);
      leaks = report.toString();
    }
    toFree.forEach(RegisteredRegion::close);
    if (!leaks.isEmpty()) {
      throw new IllegalStateException("allocator '" + name + "' closed with memory still out: " + leaks);
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "RegisteredAllocator[" + name + ", " + allocated + " bytes held, " + outstanding.size() + " out, "
          + idleCount + " idle" + (closed ? ", closed" : "") + "]";
    }
  }

  private int closeLocked(List<RegisteredRegion> toFree) {
    closed = true;
    drainIdle(toFree);
    lock.notifyAll();
    detachIfDone();
    return outstandingInSubtree();
  }

  private int outstandingInSubtree() {
    int n = outstanding.size();
    for (RegisteredAllocator c : children) {
      n += c.outstandingInSubtree();
    }
    return n;
  }

  private void describeOutstanding(StringBuilder report) {
    if (!outstanding.isEmpty()) {
      if (report.length() > 0) {
        report.append("; ");
      }
      report.append("allocator '").append(name).append("' has ").append(outstanding.size())
          .append(outstanding.size() == 1 ? " region" : " regions").append(" out (largest first: ");
      int listed = 0;
      List<Long> sizes = new ArrayList<>(outstanding.values());
      sizes.sort(java.util.Comparator.reverseOrder());
      for (long size : sizes) {
        if (listed == SIZES_LISTED) {
          report.append(", ...");
          break;
        }
        report.append(listed++ == 0 ? "" : ", ").append(size);
      }
      report.append(" bytes)");
    }
    for (RegisteredAllocator c : children) {
      c.describeOutstanding(report);
    }
  }

  private void checkOpen() {
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      if (a.closed) {
        throw new IllegalStateException("allocator '" + a.name + "' is closed"
            + (a == this ? "" : ", so its child '" + name + "' allocates nothing"));
      }
    }
  }

  private boolean closedHere() {
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      if (a.closed) {
        return true;
      }
    }
    return false;
  }

  /** Rounded up to the size class, unless only the exact length fits under the tree's limits. */
  private long sizeFor(long length) {
    long smallestLimit = Long.MAX_VALUE;
    RegisteredAllocator limiting = this;
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      if (a.limit() < smallestLimit) {
        smallestLimit = a.limit();
        limiting = a;
      }
    }
    long exact = Math.max(length, 1);
    if (exact > smallestLimit) {
      throw new IllegalArgumentException(length + " bytes asked of allocator '" + name + "' exceed the limit of '"
          + limiting.name + "' (" + smallestLimit + " bytes)");
    }
    long size = options.sizes().regionSize(length);
    if (size > smallestLimit) {
      size = exact;
    }
    if (size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(length + " bytes asked of allocator '" + name
          + "': a region holds at most " + Integer.MAX_VALUE + " bytes");
    }
    return size;
  }

  /** The smallest idle region that serves {@code length} bytes; revoked ones go to {@code dropped}. */
  private RegisteredRegion takeIdle(long length, List<RegisteredRegion> dropped) {
    while (true) {
      Map.Entry<Long, ArrayDeque<RegisteredRegion>> e = idle.ceilingEntry(Math.max(length, 1));
      if (e == null || e.getKey() > options.sizes().largestReused(length)) {
        return null;
      }
      RegisteredRegion r = e.getValue().pollFirst();
      if (e.getValue().isEmpty()) {
        idle.remove(e.getKey());
      }
      idleBytes -= e.getKey();
      idleCount--;
      if (!r.isOpen()) {
        // revoked while idle (its transport closed): no use as memory, so its bytes go back
        uncharge(e.getKey());
        dropped.add(r);
        continue;
      }
      outstanding.put(r, e.getKey());
      return r;
    }
  }

  /** Charges {@code size} to this node and its ancestors, freeing idle regions or waiting for room. */
  private void reserve(long size, boolean wait, long deadlineNanos, List<RegisteredRegion> reclaimed)
      throws TimeoutException, InterruptedException {
    while (true) {
      RegisteredAllocator full = firstFull(size);
      if (full == null) {
        break;
      }
      if (full.drainIdle(reclaimed) > 0) {
        continue;
      }
      String state = "allocator '" + full.name + "' holds " + full.allocated + " of its " + full.limit()
          + " bytes";
      if (!wait) {
        throw new MemoryLimitException("no room for " + size + " bytes of registered memory: " + state);
      }
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        throw new TimeoutException("registered memory stayed full: " + state + ", " + size + " more wanted");
      }
      full.waiting++;
      try {
        lock.wait(Math.max(1, left / 1_000_000));
      } finally {
        full.waiting--;
      }
      checkOpen();
    }
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      a.allocated += size;
      a.peak = Math.max(a.peak, a.allocated);
    }
  }

  private boolean waitedOn() {
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      if (a.waiting > 0) {
        return true;
      }
    }
    return false;
  }

  private int waitersInSubtree() {
    int n = waiting;
    for (RegisteredAllocator c : children) {
      n += c.waitersInSubtree();
    }
    return n;
  }

  private RegisteredAllocator firstFull(long size) {
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      if (a.allocated + size > a.limit()) {
        return a;
      }
    }
    return null;
  }

  /** Moves the idle regions of this node and its descendants to {@code into}; returns their bytes. */
  private long drainIdle(List<RegisteredRegion> into) {
    long bytes = 0;
    for (Map.Entry<Long, ArrayDeque<RegisteredRegion>> e : idle.entrySet()) {
      for (RegisteredRegion r : e.getValue()) {
        into.add(r);
        uncharge(e.getKey());
        bytes += e.getKey();
      }
    }
    idle.clear();
    idleBytes = 0;
    idleCount = 0;
    for (RegisteredAllocator c : new ArrayList<>(children)) {
      bytes += c.drainIdle(into);
    }
    return bytes;
  }

  private long takeOutstanding(RegisteredRegion region) {
    Long size = outstanding.remove(region);
    if (size == null) {
      throw new IllegalArgumentException(region + " is not out from allocator '" + name
          + "' (given back twice, or allocated elsewhere)");
    }
    return size;
  }

  private void uncharge(long size) {
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      a.allocated -= size;
    }
    lock.notifyAll();
    for (RegisteredAllocator a = this; a != null; a = a.parent) {
      a.detachIfDone();
    }
  }

  /** A closed node with nothing left leaves its parent, so the parent's close sees no leak. */
  private void detachIfDone() {
    if (closed && parent != null && outstanding.isEmpty() && idleCount == 0 && children.isEmpty()
        && allocated == 0) {
      parent.children.remove(this);
    }
  }
}
