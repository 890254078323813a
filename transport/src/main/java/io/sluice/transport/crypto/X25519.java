package io.sluice.transport.crypto;

import io.sluice.transport.AuthenticationFailedException;
import java.math.BigInteger;
import java.security.SecureRandom;

/**
 * X25519 Diffie-Hellman (RFC 7748) on raw 32-byte keys, by the JVM's {@link Curves}. A public key
 * is its u-coordinate, 32 bytes little-endian; on receipt the top bit is masked, as RFC 7748 asks.
 * Stateless and thread safe.
 */
public final class X25519 {
  /** Length of a raw public key, a private scalar and a shared secret. */
  public static final int KEY_LENGTH = 32;

  /** One side's ephemeral key pair, both raw: the scalar as RFC 7748 writes it and the u-coordinate. */
  public record KeyPair(byte[] privateKey, byte[] publicKey) {}

  private X25519() {}

  /** A fresh key pair, its scalar drawn from {@code random}. */
  public static KeyPair generate(SecureRandom random) {
    byte[] scalar = new byte[KEY_LENGTH];
    random.nextBytes(scalar);
    return fromPrivate(scalar);
  }

  /** The key pair of a given private scalar (32 bytes, as RFC 7748 writes them; clamped by X25519 itself). */
  public static KeyPair fromPrivate(byte[] scalar) {
    if (scalar.length != KEY_LENGTH) {
      throw new IllegalArgumentException("an X25519 private key is " + KEY_LENGTH + " bytes, not " + scalar.length);
    }
    return new KeyPair(scalar.clone(), Curves.chosen().x25519Public(scalar));
  }

  /**
   * X25519(own private key, peer's public key).
   *
   * @throws AuthenticationFailedException if the peer's key is a point of small order, which makes
   *     the shared secret all zeros (RFC 7748 section 6.1), or is not 32 bytes
   */
  public static byte[] agree(byte[] own, byte[] peerPublic) throws AuthenticationFailedException {
    if (peerPublic.length != KEY_LENGTH) {
      throw new AuthenticationFailedException("peer's ephemeral key is " + peerPublic.length + " bytes");
    }
    byte[] shared = Curves.chosen().x25519(own, peerPublic);
    int any = 0;
    for (int i = 0; shared != null && i < shared.length; i++) {
      any |= shared[i];
    }
    if (any == 0) {
      throw new AuthenticationFailedException("peer's ephemeral key is a point of small order");
    }
    return shared;
  }

  /** The u-coordinate as 32 bytes little-endian. */
  public static byte[] encode(BigInteger u) {
    byte[] big = u.toByteArray(); // big-endian, maybe with a leading sign byte
    byte[] little = new byte[KEY_LENGTH];
    for (int i = 0; i < KEY_LENGTH && i < big.length; i++) {
      little[i] = big[big.length - 1 - i];
    }
    return little;
  }

  /** The u-coordinate of 32 little-endian bytes, the top bit masked. */
  public static BigInteger decode(byte[] little) {
    byte[] big = new byte[KEY_LENGTH];
    for (int i = 0; i < KEY_LENGTH; i++) {
      big[i] = little[KEY_LENGTH - 1 - i];
    }
    big[0] &= 0x7f;
    return new BigInteger(1, big);
  }
}
