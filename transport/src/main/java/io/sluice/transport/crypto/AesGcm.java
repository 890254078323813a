package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import javax.crypto.AEADBadTagException;

/**
 * AES-128-GCM under one key, for one direction of one connection: records are sealed with {@link
 * #startSeal}, {@link #seal} for each piece of plain text but the last and {@link #finishSeal}, or
 * opened whole with {@link #open}. The nonce of a record is 4 zero bytes followed by its 64-bit
 * sequence number (docs/protocol.md, "Record layer"); the caller never uses a sequence number twice
 * with one key. Buffers are direct or heap, never copied by this class.
 *
 * <p>Not thread safe: one writer seals, one reader opens. Made by an {@link AesGcmEngine}.
 */
public abstract class AesGcm {
  /** Bytes of a key. */
  public static final int KEY_LENGTH = 16;
  /** Bytes of the tag that authenticates a record. */
  public static final int TAG_LENGTH = 16;

  AesGcm() {}

  /** Starts sealing a record numbered {@code seq} whose associated data is {@code aad}'s remaining bytes. */
  public abstract void startSeal(long seq, ByteBuffer aad);

  /** Encrypts all of {@code in}'s remaining bytes into {@code out}; both positions advance. */
  public abstract void seal(ByteBuffer in, ByteBuffer out);

  /**
   * Encrypts {@code last} (may be empty) and ends the record: what is left of its ciphertext then
   * its tag go to {@code out}, the tag being the last {@link #TAG_LENGTH} bytes written.
   */
  public abstract void finishSeal(ByteBuffer last, ByteBuffer out);

  /**
   * Opens the record numbered {@code seq}: {@code record}'s remaining bytes are its ciphertext
   * followed by its tag, its plain text goes to {@code dst} (whose position advances). When the
   * tag does not check out, no plain text is left in {@code dst}.
   *
   * @throws AEADBadTagException if the record, its associated data or its number is not the one
   *     sealed
   */
  public abstract void open(long seq, ByteBuffer aad, ByteBuffer record, ByteBuffer dst) throws AEADBadTagException;

  /** The 12-byte nonce of record {@code seq}: 4 zero bytes, then {@code seq} big-endian. */
  static byte[] nonce(long seq, byte[] into) {
    for (int i = 0; i < 8; i++) {
      into[4 + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return into;
  }
}
