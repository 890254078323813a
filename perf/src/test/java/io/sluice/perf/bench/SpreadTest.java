package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SpreadTest {
  @Test
  void smallestMedianAndLargest() {
    double[] rounds = {5, 1, 4, 2};
    assertEquals(new Spread(1, 3, 5, 4), Spread.of(rounds));
    assertArrayEquals(new double[] {5, 1, 4, 2}, rounds, "the rounds are not reordered");
    assertEquals(new Spread(7, 7, 7, 1), Spread.of(List.of(7.0)));
    assertEquals("1.00 / 3.00 / 5.00", Spread.of(rounds).format("%.2f"));
    assertThrows(IllegalArgumentException.class, () -> Spread.of(new double[0]));
  }
}
