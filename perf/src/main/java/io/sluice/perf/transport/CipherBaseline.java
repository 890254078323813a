package io.sluice.perf.transport;

import io.sluice.transport.crypto.AesGcm;
import io.sluice.transport.crypto.AesGcmEngine;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The ceilings the record layer's cryptography puts on READs, one thread, over a source as large
 * as the region that READs cycle over:
 *
 * <ul>
 *   <li>{@link Work#SEAL}: an encrypted connection's writer, sealing blocks with one {@link
 *       AesGcmEngine}'s AES-128-GCM, direct buffer to direct buffer, in records of {@link #RECORD}
 *       bytes with a fresh nonce and the header as associated data; the reader's opening costs about
 *       the same on the other side.
 *   <li>{@link Work#GMAC}: a mac mode connection's READ_RESPONSE tag, a GMAC over each whole block
 *       where it lies (the writer computes it once, the reader checks it once).
 *   <li>{@link Work#HMAC}: the same tag as HMAC-SHA256 would cost (the JDK's), for comparison: what
 *       a keyed hash of the body instead of a GMAC would cost.
 * </ul>
 *
 * Not thread safe.
 */
final class CipherBaseline {
  /** What is measured. */
  enum Work {
    SEAL("seal"),
    GMAC("gmac"),
    HMAC("hmac");

    final String label;

    Work(String label) {
      this.label = label;
    }
  }

  /** The plain bytes per record an encrypted connection seals. */
  static final int RECORD = 64 * 1024;
  private static final int TAG = 16;

  private final ByteBuffer source;
  private final Work work;
  private final String engine;
  private final AesGcm cipher;
  private final Mac hmac;
  private final ByteBuffer header = ByteBuffer.allocate(16);
  private long seq;

  /**
   * A source of {@code regionBytes}, filled so its pages are real memory, for {@code work} with
   * {@code engine} (ignored for {@link Work#HMAC}).
   */
  CipherBaseline(int regionBytes, Work work, AesGcmEngine engine) {
    this.source = ByteBuffer.allocateDirect(regionBytes);
    RegionPattern.fill(source);
    this.work = work;
    this.engine = work == Work.HMAC ? "jdk" : engine.id();
    if (work == Work.HMAC) {
      this.cipher = null;
      try {
        this.hmac = Mac.getInstance("HmacSHA256");
        this.hmac.init(new SecretKeySpec(new byte[32], "HmacSHA256"));
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("JDK lacks HmacSHA256", e);
      }
    } else {
      this.cipher = engine.sealer(new byte[AesGcm.KEY_LENGTH]);
      this.hmac = null;
    }
  }

  /** The name of this measurement on {@code block}-sized blocks. */
  String name(int block) {
    return switch (work) {
      case SEAL -> Names.cipher(engine, block);
      case GMAC -> Names.gmac(engine, block);
      case HMAC -> Names.hmac(block);
    };
  }

  /** Runs on {@code block}-sized blocks for {@code warmup}, then measures for {@code measure}; GB/s of plain text. */
  double gigabytesPerSecond(int block, Duration warmup, Duration measure) {
    if (block > source.capacity()) {
      throw new IllegalArgumentException("block " + block + " exceeds the source " + source.capacity());
    }
    int records = (block + RECORD - 1) / RECORD;
    ByteBuffer destination = ByteBuffer.allocateDirect(block + records * TAG);
    run(destination, block, warmup.toNanos());
    long start = System.nanoTime();
    long bytes = run(destination, block, measure.toNanos());
    return bytes / (double) (System.nanoTime() - start);
  }

  /** Does the work on one block after another, cycling over the source, for {@code nanos}; the bytes done. */
  private long run(ByteBuffer destination, int block, long nanos) {
    int blocks = source.capacity() / block;
    long deadline = System.nanoTime() + nanos;
    long bytes = 0;
    int i = 0;
    do {
      ByteBuffer body = source.slice(i * block, block);
      switch (work) {
        case SEAL -> sealBlock(body, destination);
        case GMAC -> gmacBlock(body, destination);
        case HMAC -> hmacBlock(body);
      }
      bytes += block;
      i = i + 1 == blocks ? 0 : i + 1;
    } while (System.nanoTime() < deadline);
    return bytes;
  }

  /** Seals {@code body} in records into {@code destination}, as an encrypted connection's writer does. */
  private void sealBlock(ByteBuffer body, ByteBuffer destination) {
    destination.clear();
    for (int off = 0; off < body.capacity(); off += RECORD) {
      cipher.startSeal(seq++, header.clear());
      cipher.finishSeal(body.slice(off, Math.min(RECORD, body.capacity() - off)), destination);
    }
  }

  /** The GMAC of header | {@code body} where it lies, into {@code destination}, as mac mode tags a READ body. */
  private void gmacBlock(ByteBuffer body, ByteBuffer destination) {
    cipher.startMac(seq++);
    cipher.macMore(header.clear());
    cipher.macMore(body);
    cipher.finishMac(destination.clear());
  }

  /** HMAC-SHA256 of header | {@code body}. */
  private void hmacBlock(ByteBuffer body) {
    hmac.update(header.clear());
    hmac.update(body);
    hmac.doFinal();
  }
}
