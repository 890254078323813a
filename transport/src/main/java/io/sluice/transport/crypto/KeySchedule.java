package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * The keys of one connection, from the pre-shared key, the ephemeral Diffie-Hellman secret and the
 * transcript hash (see docs/protocol.md, "Key schedule"):
 *
 * <pre>
 *   th  = SHA-256("sluice/6 transcript" | u32 len(HELLO) | HELLO | u32 len(CHALLENGE) | CHALLENGE)
 *   hs  = HKDF-Extract(salt = psk, IKM = dh)
 *   key = HKDF-Expand(hs, label | th, length)   for each label below
 * </pre>
 *
 * where HELLO and CHALLENGE are the handshake payloads exactly as sent, and labels are ASCII:
 * "sluice/6 client finished" (32 bytes), "sluice/6 c2s" and "sluice/6 s2c" (32 bytes in mac mode,
 * 16 in aead mode). A key is a function of dh: whoever holds the secret and a recorded transcript
 * but neither ephemeral private key cannot compute it. Immutable.
 */
public record KeySchedule(byte[] transcriptHash, byte[] dh, byte[] handshakeSecret, byte[] clientFinishedKey,
    byte[] clientToServer, byte[] serverToClient, boolean encrypted) {
  public static final String TRANSCRIPT = "sluice/6 transcript";
  public static final String CLIENT_FINISHED = "sluice/6 client finished";
  public static final String CLIENT_TO_SERVER = "sluice/6 c2s";
  public static final String SERVER_TO_CLIENT = "sluice/6 s2c";
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
    int recordKey = encrypted ? AesGcm.KEY_LENGTH : MAC_KEY_LENGTH;
    return new KeySchedule(th, dh, hs, expand(hs, CLIENT_FINISHED, th, Hkdf.HASH_LENGTH),
        expand(hs, CLIENT_TO_SERVER, th, recordKey), expand(hs, SERVER_TO_CLIENT, th, recordKey), encrypted);
  }

  private static byte[] expand(byte[] hs, String label, byte[] th, int length) {
    byte[] l = label.getBytes(StandardCharsets.US_ASCII);
    byte[] info = new byte[l.length + th.length];
    System.arraycopy(l, 0, info, 0, l.length);
    System.arraycopy(th, 0, info, l.length, th.length);
    return Hkdf.expand(hs, info, length);
  }

  /** The client's finished value: HMAC-SHA256(client finished key, th). */
  public byte[] clientFinished() {
    return Hkdf.hmac(clientFinishedKey, transcriptHash);
  }

  /** The record keys. */
  public SessionKeys sessionKeys() {
    return new SessionKeys(clientToServer, serverToClient, encrypted);
  }
}
