package io.sluice.perf.tpcds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultRowsTest {
  @Test
  void encodesEachKindWithItsTag() {
    String row = ResultRows.encodeRow(Arrays.asList(null, 42L, 7, new BigDecimal("12.30"), 1.5, "a\tb\\c\nd",
        java.sql.Date.valueOf("2000-01-02")));
    assertEquals("\\N\ti:42\ti:7\tn:12.30\td:1.5\ts:a\\tb\\\\c\\nd\ts:2000-01-02", row);
  }

  @Test
  void orderOfRowsDoesNotMatter() {
    List<String> a = List.of(row("x", 1), row("y", 2));
    List<String> b = List.of(row("y", 2), row("x", 1));
    assertTrue(ResultRows.difference(a, b).isEmpty());
  }

  @Test
  void decimalsCompareExactlyIncludingScale() {
    assertFalse(ResultRows.difference(List.of(dec("1.00")), List.of(dec("1.0"))).isEmpty());
    assertFalse(ResultRows.difference(List.of(dec("0.01")), List.of(dec("0.02"))).isEmpty());
    assertTrue(ResultRows.difference(List.of(dec("123.45")), List.of(dec("123.45"))).isEmpty());
  }

  @Test
  void doublesWithinTheRelativeToleranceAreEqual() {
    double a = 1234.5678;
    double close = a * (1 + ResultRows.DOUBLE_TOLERANCE / 10);
    double far = a * (1 + ResultRows.DOUBLE_TOLERANCE * 10);
    assertTrue(ResultRows.difference(List.of(dbl(a)), List.of(dbl(close))).isEmpty());
    assertFalse(ResultRows.difference(List.of(dbl(a)), List.of(dbl(far))).isEmpty());
    assertTrue(ResultRows.difference(List.of(dbl(Double.NaN)), List.of(dbl(Double.NaN))).isEmpty());
    assertFalse(ResultRows.difference(List.of(dbl(0.0)), List.of(dbl(1e-300))).isEmpty());
  }

  @Test
  void aDoubleNeverEqualsAnotherKind() {
    assertFalse(ResultRows.difference(List.of("d:1.0"), List.of("n:1.0")).isEmpty());
    assertFalse(ResultRows.difference(List.of("d:1.0"), List.of("\\N")).isEmpty());
  }

  @Test
  void reportsRowCountsAndTheFirstDifferingRow() {
    assertEquals("2 rows against 1", ResultRows.difference(List.of("i:1", "i:2"), List.of("i:1")).orElseThrow());
    String d = ResultRows.difference(List.of("i:1", "i:2"), List.of("i:1", "i:3")).orElseThrow();
    assertTrue(d.startsWith("row 2 of 2"), d);
    assertFalse(ResultRows.difference(List.of("i:1\ti:2"), List.of("i:1")).isEmpty());
  }

  private static String row(String s, long n) {
    return ResultRows.encodeRow(List.of(s, n));
  }

  private static String dec(String d) {
    return ResultRows.encodeRow(List.of(new BigDecimal(d)));
  }

  private static String dbl(double d) {
    return ResultRows.encodeRow(List.of(d));
  }
}
