package io.sluice.transport.carrier;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One line per interval, and the next line says how many were left out; on a clock the test drives. */
class LogLimiterTest {
  @Test
  void aFloodBecomesOneLinePerIntervalThatCountsTheRest() {
    LogLimiter limit = new LogLimiter(1, TimeUnit.SECONDS);
    List<Long> lines = new ArrayList<>();
    long second = TimeUnit.SECONDS.toNanos(1);
    long t = 1_000;
    for (int i = 0; i < 3_600; i++) {
      limit.log(t + i * (second / 1_000), lines::add); // 3,600 events in 3.6 s
    }
    assertEquals(List.of(0L, 999L, 999L, 999L), lines);
    limit.log(t + 10 * second, lines::add);
    assertEquals(599L, lines.get(4), "the lines left out since the last one");
  }
}
