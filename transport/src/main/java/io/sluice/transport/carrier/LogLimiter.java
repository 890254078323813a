package io.sluice.transport.carrier;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Lets one log line of a kind through per interval and counts the rest, so that a flood of
 * refused or dropped connections costs a few lines a minute, not one line per connection: the
 * next line that gets through says how many were left out since the last one. Thread safe and
 * lock free.
 */
final class LogLimiter {
  private final long intervalNanos;
  private final AtomicLong next = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  LogLimiter(long interval, TimeUnit unit) {
    this.intervalNanos = unit.toNanos(interval);
  }

  /**
   * Runs {@code log} with the number of lines left out since the last one that got through, if
   * this one may get through now; otherwise counts it.
   */
  void log(LongConsumer log) {
    log(System.nanoTime(), log);
  }

  void log(long now, LongConsumer log) {
    long due = next.get();
    if ((due == Long.MIN_VALUE || now - due >= 0) && next.compareAndSet(due, now + intervalNanos)) {
      log.accept(suppressed.getAndSet(0));
    } else {
      suppressed.incrementAndGet();
    }
  }
}
