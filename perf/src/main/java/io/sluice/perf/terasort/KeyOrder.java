package io.sluice.perf.terasort;

import java.io.Serializable;
import java.util.Comparator;

/** Unsigned lexicographic order of TeraSort keys, serializable for Spark's sorter. Stateless. */
final class KeyOrder implements Comparator<byte[]>, Serializable {
  private static final long serialVersionUID = 1L;

  @Override
  public int compare(byte[] a, byte[] b) {
    return TeraRecords.compareKeys(a, b);
  }
}
