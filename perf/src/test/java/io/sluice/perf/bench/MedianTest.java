package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class MedianTest {
  @Test
  void middleValueOrMeanOfTheTwoMiddleOnes() {
    double[] rounds = {3, 1, 2};
    assertEquals(2, Median.of(rounds));
    assertArrayEquals(new double[] {3, 1, 2}, rounds, "the rounds are not reordered");
    assertEquals(2.5, Median.of(4, 1, 3, 2));
    assertEquals(7, Median.of(List.of(7.0)));
    assertThrows(IllegalArgumentException.class, () -> Median.of(new double[0]));
  }
}
