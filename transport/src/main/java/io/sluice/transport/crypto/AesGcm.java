package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import javax.crypto.AEADBadTagException;

/**
 * AES-128-GCM under one key, for one direction of one connection: records are sealed with {@link
 * #startSeal}, {@link #seal} for each piece of plain text but the last and {@link #finishSeal}, or
 * opened whole with {@link #open}. A GMAC (AES-GCM over no plain text: its tag over associated data
 * alone, mac mode's READ_RESPONSE tag) is {@link #startMac}, {@link #macMore} for each piece, then
 * {@link #finishMac} on the sealing side or {@link #checkMac} on the opening side. The nonce of a
 * record or GMAC is 4 zero bytes followed by its 64-bit sequence number (docs/protocol.md, "Record
 * layer"); the caller never uses a sequence number twice with one key. Buffers are direct or heap,
 * never copied by this class.
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

  /** Starts the GMAC numbered {@code seq}; its associated data follows with {@link #macMore}. */
  public abstract void startMac(long seq);

  /** Adds {@code data}'s remaining bytes to the associated data of the GMAC started; its position advances. */
  public abstract void macMore(ByteBuffer data);

  /** Ends the GMAC on the sealing side: its {@link #TAG_LENGTH}-byte tag goes to {@code out}. */
  public abstract void finishMac(ByteBuffer out);

  /**
   * Ends the GMAC on the opening side and compares its tag with {@code tag}'s remaining bytes, in
   * constant time.
   *
   * @throws AEADBadTagException if they differ: the data, its number or the key is not the one MACed
   */
  public abstract void checkMac(ByteBuffer tag) throws AEADBadTagException;

  /**
   * Drops the record or GMAC started and not finished, if any, with whatever it holds outside the
   * heap: for a caller that will not finish it (its connection closed half-way).
   */
  public abstract void abandon();

  /** The 12-byte nonce of record {@code seq}: 4 zero bytes, then {@code seq} big-endian. */
  static byte[] nonce(long seq, byte[] into) {
    for (int i = 0; i < 8; i++) {
      into[4 + i] = (byte) (seq >>> (56 - 8 * i));
    }
    return into;
  }
}
