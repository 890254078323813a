package io.sluice.spark.shuffle.startup;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What starting an executor's shuffle transport cost: how long the open took on its own thread,
 * its steps, how long the first task that needed the transport waited for it (the open runs
 * while the first map task computes, so often not at all), and how long each first connection to a peer took
 * (connect, authenticate, attach shm), from the call to a usable connection. Recording costs a
 * clock read and a lock taken once per step and once per peer.
 *
 * <p>Bounded: it keeps the latencies of at most {@link #MAX_SAMPLES} first connections for the
 * median (count, sum and maximum go on counting). Thread safe.
 */
public final class StartupTimes {
  /** First connections whose latency is kept for the median. */
  public static final int MAX_SAMPLES = 1024;

  private final Map<String, Long> steps = new LinkedHashMap<>(); // guarded by this
  private long openNanos; // guarded by this
  private long openWaitNanos; // guarded by this
  private boolean waitRecorded; // guarded by this
  private int registeredAfterOpen; // guarded by this
  private long[] samples = new long[16]; // guarded by this
  private int sampled; // guarded by this
  private int firstConnects; // guarded by this
  private long firstConnectSumNanos; // guarded by this
  private long firstConnectMaxNanos; // guarded by this

  /** One step of the open took {@code nanos} (a step recorded twice adds up). */
  public synchronized void step(String name, long nanos) {
    steps.merge(name, nanos, Long::sum);
  }

  /** Records step {@code name} as lasting from {@code since} ({@link System#nanoTime}) to now; returns now. */
  public long lap(String name, long since) {
    long now = System.nanoTime();
    step(name, now - since);
    return now;
  }

  /** The open ended, {@code nanos} after it began. */
  public synchronized void opened(long nanos) {
    openNanos = nanos;
  }

  /**
   * A task that needed the transport waited {@code nanos} for the open (0: it was open already).
   * Only the first such task's wait is kept: later ones find it open.
   */
  public synchronized void waited(long nanos) {
    if (!waitRecorded) {
      waitRecorded = true;
      openWaitNanos = nanos;
    }
  }

  /** {@code n} map outputs committed while the open ran were registered once it had ended. */
  public synchronized void registeredAfterOpen(int n) {
    registeredAfterOpen += n;
  }

  /** How many map outputs were registered after the open, their tasks having gone on without it. */
  public synchronized int registeredAfterOpen() {
    return registeredAfterOpen;
  }

  /** A first connection to a peer was usable {@code nanos} after it was asked for. */
  public synchronized void firstConnect(long nanos) {
    firstConnects++;
    firstConnectSumNanos += nanos;
    firstConnectMaxNanos = Math.max(firstConnectMaxNanos, nanos);
    if (sampled < MAX_SAMPLES) {
      if (sampled == samples.length) {
        samples = Arrays.copyOf(samples, Math.min(MAX_SAMPLES, samples.length * 2));
      }
      samples[sampled++] = nanos;
    }
  }

  /** How long the open took on its own thread; 0 before it ended. */
  public synchronized long openNanos() {
    return openNanos;
  }

  /** How long the first task that needed the transport waited for the open; 0 if none did or it was open already. */
  public synchronized long openWaitNanos() {
    return openWaitNanos;
  }

  /** The open's steps in the order they were first recorded, with their nanos. */
  public synchronized Map<String, Long> steps() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(steps));
  }

  /** {@code steps} as a reader wants them: {@code "metrics 38.8 ms, driver 14.8 ms, ..."}, in their order. */
  public static String describe(Map<String, Long> steps) {
    StringBuilder out = new StringBuilder();
    steps.forEach((step, nanos) -> out.append(out.length() == 0 ? "" : ", ").append(step).append(' ')
        .append(String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e6)).append(" ms"));
    return out.toString();
  }

  public synchronized int firstConnects() {
    return firstConnects;
  }

  public synchronized long firstConnectSumNanos() {
    return firstConnectSumNanos;
  }

  public synchronized long firstConnectMaxNanos() {
    return firstConnectMaxNanos;
  }

  /** The median of the kept first-connection latencies (the lower middle of an even count); 0 if none. */
  public synchronized long firstConnectMedianNanos() {
    if (sampled == 0) {
      return 0;
    }
    long[] sorted = Arrays.copyOf(samples, sampled);
    Arrays.sort(sorted);
    return sorted[(sampled - 1) / 2];
  }
}
