package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PercentileTest {
  @Test
  void nearestRank() {
    LatencySamples s = new LatencySamples(100);
    for (int i = 100; i >= 1; i--) {
      s.add(i * 1_000L);
    }
    assertEquals(50.0, s.micros(Percentile.P50), 0);
    assertEquals(99.0, s.micros(Percentile.P99), 0);
  }

  @Test
  void singleSampleAndEmpty() {
    LatencySamples s = new LatencySamples(1);
    assertThrows(IllegalArgumentException.class, () -> s.micros(Percentile.P50));
    s.add(7_000);
    assertEquals(7.0, s.micros(Percentile.P99), 0);
    assertThrows(IllegalStateException.class, () -> s.add(1));
  }

  @Test
  void poolingKeepsEverySample() {
    LatencySamples a = new LatencySamples(10);
    LatencySamples b = new LatencySamples(10);
    a.add(1_000);
    a.add(2_000);
    b.add(3_000);
    LatencySamples all = LatencySamples.pool(java.util.List.of(a, b));
    assertEquals(3, all.count());
    assertEquals(2.0, all.micros(Percentile.P50), 0);
    assertEquals(3.0, all.micros(Percentile.P99), 0);
  }
}
