package io.sluice.transport.crypto;

import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HKDF with HMAC-SHA256 (RFC 5869): {@link #extract} concentrates input keying material into a
 * pseudorandom key, {@link #expand} stretches a pseudorandom key into keys for named purposes.
 * The JDK 17 has no HKDF of its own. Stateless and thread safe.
 */
public final class Hkdf {
  /** Length of HMAC-SHA256's output, and of every pseudorandom key. */
  public static final int HASH_LENGTH = 32;

  private Hkdf() {}

  /** HKDF-Extract(salt, ikm) = HMAC-SHA256(salt, ikm); an empty salt stands for 32 zero bytes. */
  public static byte[] extract(byte[] salt, byte[] ikm) {
    return hmac(salt.length == 0 ? new byte[HASH_LENGTH] : salt, ikm);
  }

  /**
   * HKDF-Expand(prk, info, length): T(1) | T(2) | ... cut to {@code length} bytes, where T(i) =
   * HMAC-SHA256(prk, T(i-1) | info | i) with T(0) empty and i one byte.
   *
   * @throws IllegalArgumentException unless 0 < length <= 255 * 32
   */
  public static byte[] expand(byte[] prk, byte[] info, int length) {
    if (length <= 0 || length > 255 * HASH_LENGTH) {
      throw new IllegalArgumentException("HKDF-Expand of " + length + " bytes");
    }
    Mac mac = mac(prk);
    byte[] out = new byte[length];
    byte[] block = new byte[0];
    for (int i = 1, done = 0; done < length; i++) {
      mac.update(block);
      mac.update(info);
      mac.update((byte) i);
      block = mac.doFinal();
      int n = Math.min(block.length, length - done);
      System.arraycopy(block, 0, out, done, n);
      done += n;
    }
    return out;
  }

  /** HMAC-SHA256(key, data). */
  public static byte[] hmac(byte[] key, byte[] data) {
    return mac(key).doFinal(data);
  }

  private static Mac mac(byte[] key) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
