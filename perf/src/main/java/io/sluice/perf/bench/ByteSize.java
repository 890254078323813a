package io.sluice.perf.bench;

/** Short binary labels for byte counts as they appear in measurement names: 4KiB, 1MiB, 8MiB. */
public final class ByteSize {
  private ByteSize() {}

  /** The largest binary unit that divides {@code bytes} exactly, for example {@code 65536 -> "64KiB"}. */
  public static String label(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("byte count must be positive, got " + bytes);
    }
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    while (unit + 1 < units.length && bytes % 1024 == 0) {
      bytes /= 1024;
      unit++;
    }
    return bytes + units[unit];
  }
}
