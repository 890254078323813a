package io.sluice.transport;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one way the tests of every module wait for something that happens on another thread: a
 * grant or stream released, a thread ended, a buffer given back, a connection closed, a metric
 * updated. Each call polls until its condition holds or its deadline passes, and then fails
 * naming what it waited for and the last value it saw. Never read such a count once: the
 * thread that changes it may not have run yet on a loaded machine.
 */
public final class Eventually {
  /** How long a test waits for an asynchronous effect unless it says otherwise. */
  public static final Duration DEADLINE = Duration.ofSeconds(30);

  private static final long POLL_MILLIS = 10;

  private Eventually() {}

  /** Waits until {@code condition} holds, for at most {@link #DEADLINE}. */
  public static void holds(String what, BooleanSupplier condition) {
    holds(what, DEADLINE, condition);
  }

  /** Waits until {@code condition} holds, for at most {@code deadline}. */
  public static void holds(String what, Duration deadline, BooleanSupplier condition) {
    matches(what, deadline, condition::getAsBoolean, Boolean.TRUE::equals);
  }

  /** Waits until {@code actual} gives {@code expected}, for at most {@link #DEADLINE}. */
  public static <T> T reaches(String what, T expected, Supplier<? extends T> actual) {
    return matches(what, DEADLINE, actual, v -> Objects.equals(expected, v));
  }

  /** Waits until {@code actual} gives {@code expected}, for at most {@code deadline}. */
  public static <T> T reaches(String what, Duration deadline, T expected, Supplier<? extends T> actual) {
    return matches(what, deadline, actual, v -> Objects.equals(expected, v));
  }

  /**
   * Waits until {@code value} gives something {@code ok} accepts, for at most {@code deadline},
   * and returns it; fails with the last value it saw.
   */
  public static <T> T matches(String what, Duration deadline, Supplier<? extends T> value, Predicate<? super T> ok) {
    long end = System.nanoTime() + deadline.toNanos();
    while (true) {
      T v = value.get();
      if (ok.test(v)) {
        return v;
      }
      if (System.nanoTime() - end > 0) {
        throw new AssertionError("not within " + deadline.toSeconds() + " s: " + what + " (last seen: " + v + ")");
      }
      try {
        Thread.sleep(POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for: " + what, e);
      }
    }
  }
}
