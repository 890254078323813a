package io.sluice.perf.transport;

import io.sluice.transport.crypto.AesGcm;
import io.sluice.transport.crypto.AesGcmEngine;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * The cipher's ceiling for encrypted READs: one thread seals blocks with one {@link AesGcmEngine}'s
 * AES-128-GCM, direct buffer to direct buffer, in records of {@link #RECORD} bytes with a fresh
 * nonce and the header as associated data, as an encrypted connection's writer does; the reader's
 * opening costs about the same on the other side. It cycles over a source as large as the region
 * that READs cycle over. Not thread safe.
 */
final class CipherBaseline {
  /** The plain bytes per record an encrypted connection seals. */
  static final int RECORD = 64 * 1024;
  private static final int TAG = 16;

  private final ByteBuffer source;
  private final AesGcm cipher;
  private final ByteBuffer header = ByteBuffer.allocate(16);
  private long seq;

  /** A source of {@code regionBytes}, filled so its pages are real memory, sealed by {@code engine}. */
  CipherBaseline(int regionBytes, AesGcmEngine engine) {
    this.source = ByteBuffer.allocateDirect(regionBytes);
    RegionPattern.fill(source);
    this.cipher = engine.sealer(new byte[AesGcm.KEY_LENGTH]);
  }

  /** Seals {@code block}-sized blocks for {@code warmup}, then measures for {@code measure}; GB/s of plain text. */
  double gigabytesPerSecond(int block, Duration warmup, Duration measure) {
    if (block > source.capacity()) {
      throw new IllegalArgumentException("block " + block + " exceeds the source " + source.capacity());
    }
    int records = (block + RECORD - 1) / RECORD;
    ByteBuffer destination = ByteBuffer.allocateDirect(block + records * TAG);
    seal(destination, block, warmup.toNanos());
    long start = System.nanoTime();
    long bytes = seal(destination, block, measure.toNanos());
    return bytes / (double) (System.nanoTime() - start);
  }

  private long seal(ByteBuffer destination, int block, long nanos) {
    int blocks = source.capacity() / block;
    long deadline = System.nanoTime() + nanos;
    long bytes = 0;
    int i = 0;
    do {
      destination.clear();
      for (int off = 0; off < block; off += RECORD) {
        cipher.startSeal(seq++, header.clear());
        cipher.finishSeal(source.slice(i * block + off, Math.min(RECORD, block - off)), destination);
      }
      bytes += block;
      i = i + 1 == blocks ? 0 : i + 1;
    } while (System.nanoTime() < deadline);
    return bytes;
  }
}
