package io.sluice.perf.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;

/**
 * The bytes the server fills its regions with, so the client can check that a READ returned the
 * right data and not merely some data: the big-endian long at every 8-aligned offset {@code
 * k} is {@code k * GOLDEN}. Stateless.
 */
final class RegionPattern {
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private RegionPattern() {}

  /** Fills the whole of {@code region} (position 0 to limit; a trailing partial long stays as is). */
  static void fill(ByteBuffer region) {
    LongBuffer longs = region.duplicate().position(0).order(ByteOrder.BIG_ENDIAN).asLongBuffer();
    long[] chunk = new long[8192];
    long k = 0;
    while (longs.hasRemaining()) {
      int n = Math.min(chunk.length, longs.remaining());
      for (int i = 0; i < n; i++, k += 8) {
        chunk[i] = k * GOLDEN;
      }
      longs.put(chunk, 0, n);
    }
  }

  /**
   * Checks every long of {@code length} bytes that were read from {@code remoteOffset} into
   * {@code local} at {@code localOffset}.
   *
   * @throws IOException naming the first wrong offset
   */
  static void check(ByteBuffer local, int localOffset, long remoteOffset, int length) throws IOException {
    if (length < 8 || length % 8 != 0 || remoteOffset % 8 != 0) {
      throw new IllegalArgumentException("check needs 8-aligned READs of whole longs");
    }
    ByteBuffer got = local.duplicate().order(ByteOrder.BIG_ENDIAN);
    for (int p = 0; p < length; p += 8) {
      long expected = (remoteOffset + p) * GOLDEN;
      long actual = got.getLong(localOffset + p);
      if (actual != expected) {
        throw new IOException(String.format(
            "READ returned wrong data at remote offset %d: expected %016x, got %016x",
            remoteOffset + p, expected, actual));
      }
    }
  }
}
