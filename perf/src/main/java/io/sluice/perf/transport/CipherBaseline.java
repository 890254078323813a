package io.sluice.perf.transport;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The cipher's ceiling for encrypted READs: one thread seals blocks with the JDK's AES-128-GCM,
 * direct buffer to direct buffer, in records of {@link #RECORD} bytes with a fresh nonce each, as
 * an encrypted connection's writer must; the reader's opening costs about the same on the other
 * side. It cycles over a source as large as the region that READs cycle over. Not thread safe.
 */
final class CipherBaseline {
  /** The plain bytes per record an encrypted connection seals. */
  static final int RECORD = 64 * 1024;
  private static final int TAG = 16;

  private final ByteBuffer source;
  private final Cipher cipher;
  private final SecretKeySpec key = new SecretKeySpec(new byte[16], "AES");
  private final byte[] iv = new byte[12];
  private long seq;

  /** A source of {@code regionBytes}, filled so its pages are real memory. */
  CipherBaseline(int regionBytes) {
    this.source = ByteBuffer.allocateDirect(regionBytes);
    RegionPattern.fill(source);
    try {
      this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("this JDK has no AES/GCM", e);
    }
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
    try {
      do {
        destination.clear();
        for (int off = 0; off < block; off += RECORD) {
          for (int b = 0; b < 8; b++) {
            iv[4 + b] = (byte) (seq >>> (56 - 8 * b));
          }
          seq++;
          cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG * 8, iv));
          cipher.doFinal(source.slice(i * block + off, Math.min(RECORD, block - off)), destination);
        }
        bytes += block;
        i = i + 1 == blocks ? 0 : i + 1;
      } while (System.nanoTime() < deadline);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to seal", e);
    }
    return bytes;
  }
}
