package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The keys of one connection, from the pre-shared key, the ephemeral Diffie-Hellman secret and the
 * transcript hash (see docs/protocol.md, "Key schedule" and "Keys and rekeying"):
 *
 * <pre>
 *   th  = SHA-256("sluice/7 transcript" | u32 len(HELLO) | HELLO | u32 len(CHALLENGE) | CHALLENGE)
 *   hs  = HKDF-Extract(salt = psk, IKM = dh)
 *   client finished key = HKDF-Expand(hs, "sluice/7 client finished" | th, 32)
 *   c2s secret          = HKDF-Expand(hs, "sluice/7 c2s" | th, 32)
 *   s2c secret          = HKDF-Expand(hs, "sluice/7 s2c" | th, 32)
 * </pre>
 *
 * where HELLO and CHALLENGE are the handshake payloads exactly as sent. A direction's secret is
 * secret_0 of its key schedule: each epoch e of its sequence numbers has a secret of its own, and
 * keys from it ({@link #nextSecret}, {@link #recordKey}, {@link #bodyKey}). Every key is a function
 * of dh: whoever holds the secret and a recorded transcript but neither ephemeral private key
 * cannot compute it. Immutable.
 */
public record KeySchedule(byte[] transcriptHash, byte[] dh, byte[] handshakeSecret, byte[] clientFinishedKey,
    byte[] clientToServerSecret, byte[] serverToClientSecret, boolean encrypted) {
  public static final String TRANSCRIPT = "sluice/7 transcript";
  public static final String CLIENT_FINISHED = "sluice/7 client finished";
  public static final String CLIENT_TO_SERVER = "sluice/7 c2s";
  public static final String SERVER_TO_CLIENT = "sluice/7 s2c";
  /** secret_(e+1) = HKDF-Expand(secret_e, NEXT, 32). */
  public static final String NEXT = "sluice/7 next";
  /** key_e = HKDF-Expand(secret_e, KEY, L): the HMAC key of mac mode, the AES-128 key of aead mode. */
  public static final String KEY = "sluice/7 key";
  /** body key_e = HKDF-Expand(secret_e, BODY, 16): mac mode's AES-128 key for READ_RESPONSE's GMAC. */
  public static final String BODY = "sluice/7 body";
  /** Length of a direction's secret, of every epoch. */
  public static final int SECRET_LENGTH = Hkdf.HASH_LENGTH;
  /** Length of a mac mode record key (HMAC-SHA256). */
  public static final int MAC_KEY_LENGTH = 32;

  /** th over the HELLO and CHALLENGE payloads as they travelled. */
  public static byte[] transcriptHash(byte[] hello, byte[] challenge) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(TRANSCRIPT.getBytes(StandardCharsets.US_ASCII));
      sha.update(ByteBuffer.allocate(4).putInt(0, hello.length).array());
      sha.update(hello);
      sha.update(ByteBuffer.allocate(4).putInt(0, challenge.length).array());
      sha.update(challenge);
      return sha.digest();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }

  /** Every key of a connection whose transcript hashes to {@code th} and whose X25519 secret is {@code dh}. */
  public static KeySchedule derive(byte[] psk, byte[] dh, byte[] th, boolean encrypted) {
    byte[] hs = Hkdf.extract(psk, dh);
    return new KeySchedule(th, dh, hs, expand(hs, CLIENT_FINISHED, th, Hkdf.HASH_LENGTH),
        expand(hs, CLIENT_TO_SERVER, th, SECRET_LENGTH), expand(hs, SERVER_TO_CLIENT, th, SECRET_LENGTH), encrypted);
  }

  private static byte[] expand(byte[] hs, String label, byte[] th, int length) {
    byte[] l = label.getBytes(StandardCharsets.US_ASCII);
    byte[] info = new byte[l.length + th.length];
    System.arraycopy(l, 0, info, 0, l.length);
    System.arraycopy(th, 0, info, l.length, th.length);
    return Hkdf.expand(hs, info, length);
  }

  /** The secret of the epoch after the one whose secret is {@code secret}. */
  public static byte[] nextSecret(byte[] secret) {
    return Hkdf.expand(secret, ascii(NEXT), SECRET_LENGTH);
  }

  /**
   * key_e of the epoch whose secret is {@code secret}: an AES-128 key for {@code encrypted}
   * connections, else an HMAC-SHA256 key.
   */
  public static byte[] recordKey(byte[] secret, boolean encrypted) {
    return Hkdf.expand(secret, ascii(KEY), encrypted ? AesGcm.KEY_LENGTH : MAC_KEY_LENGTH);
  }

  /** body key_e of the epoch whose secret is {@code secret}: the AES-128 key of mac mode's READ_RESPONSE GMAC. */
  public static byte[] bodyKey(byte[] secret) {
    return Hkdf.expand(secret, ascii(BODY), AesGcm.KEY_LENGTH);
  }

  private static byte[] ascii(String label) {
    return label.getBytes(StandardCharsets.US_ASCII);
  }

  /** The client's finished value: HMAC-SHA256(client finished key, th). */
  public byte[] clientFinished() {
    return Hkdf.hmac(clientFinishedKey, transcriptHash);
  }

  /** Each direction's secret, for the record layer. */
  public SessionKeys sessionKeys() {
    return new SessionKeys(clientToServerSecret, serverToClientSecret, encrypted);
  }
}
