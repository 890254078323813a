package io.sluice.perf.tpcds;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The one text form of a query's result rows, and the comparison of two results. A row is one
 * line, its values separated by tabs, each value tagged with its kind so the comparison knows how
 * to judge it:
 *
 * <ul>
 *   <li>{@code \N}: null;
 *   <li>{@code i:42}: an integral number, compared exactly;
 *   <li>{@code n:12.30}: a decimal, its plain digits with Spark's scale, compared exactly;
 *   <li>{@code d:1.5E-7}: a double or float, compared with a relative tolerance of {@link
 *       #DOUBLE_TOLERANCE} (sums of doubles depend on the order rows arrive in, which the shuffle
 *       decides);
 *   <li>{@code s:text}: anything else by its string form (strings, dates), compared exactly;
 *       backslash, tab, newline and carriage return are escaped.
 * </ul>
 *
 * Results are compared as sorted lists of rows, so an order the query does not fix cannot make
 * two equal results differ. Stateless and thread safe.
 */
public final class ResultRows {
  /** Largest relative difference at which two doubles count as equal. */
  public static final double DOUBLE_TOLERANCE = 1e-9;

  private ResultRows() {}

  /** One value in the text form. */
  public static String encodeValue(Object v) {
    if (v == null) {
      return "\\N";
    }
    if (v instanceof Double || v instanceof Float) {
      return "d:" + ((Number) v).doubleValue();
    }
    if (v instanceof BigDecimal d) {
      return "n:" + d.toPlainString();
    }
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return "i:" + v;
    }
    return "s:" + escape(String.valueOf(v));
  }

  /** One row in the text form. */
  public static String encodeRow(List<?> values) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) {
        b.append('\t');
      }
      b.append(encodeValue(values.get(i)));
    }
    return b.toString();
  }

  /** The rows sorted, as the comparison sees them. */
  public static List<String> sorted(List<String> rows) {
    List<String> copy = new ArrayList<>(rows);
    Collections.sort(copy);
    return copy;
  }

  /**
   * Compares two results (each in any order). Returns the first difference in words, or empty
   * when they are equal.
   */
  public static Optional<String> difference(List<String> expected, List<String> actual) {
    if (expected.size() != actual.size()) {
      return Optional.of(expected.size() + " rows against " + actual.size());
    }
    List<String> a = sorted(expected);
    List<String> b = sorted(actual);
    for (int i = 0; i < a.size(); i++) {
      if (!rowsEqual(a.get(i), b.get(i))) {
        return Optional.of("row " + (i + 1) + " of " + a.size() + " (sorted) differs: [" + a.get(i) + "] against ["
            + b.get(i) + "]");
      }
    }
    return Optional.empty();
  }

  static boolean rowsEqual(String a, String b) {
    if (a.equals(b)) {
      return true;
    }
    String[] x = a.split("\t", -1);
    String[] y = b.split("\t", -1);
    if (x.length != y.length) {
      return false;
    }
    for (int i = 0; i < x.length; i++) {
      if (!x[i].equals(y[i]) && !(x[i].startsWith("d:") && y[i].startsWith("d:")
          && doublesClose(Double.parseDouble(x[i].substring(2)), Double.parseDouble(y[i].substring(2))))) {
        return false;
      }
    }
    return true;
  }

  static boolean doublesClose(double a, double b) {
    if (a == b || (Double.isNaN(a) && Double.isNaN(b))) {
      return true;
    }
    if (Double.isInfinite(a) || Double.isInfinite(b) || Double.isNaN(a) || Double.isNaN(b)) {
      return false;
    }
    return Math.abs(a - b) <= DOUBLE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
  }

  private static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\\' -> b.append("\\\\");
        case '\t' -> b.append("\\t");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        default -> b.append(c);
      }
    }
    return b.toString();
  }
}
