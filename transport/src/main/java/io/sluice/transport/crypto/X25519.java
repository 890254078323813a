package io.sluice.transport.crypto;

import io.sluice.transport.AuthenticationFailedException;
import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.interfaces.XECPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.XECPublicKeySpec;
import javax.crypto.KeyAgreement;

/**
 * X25519 Diffie-Hellman (RFC 7748) on raw 32-byte keys, with the JDK's XDH underneath. A public
 * key is its u-coordinate, 32 bytes little-endian; on receipt the top bit is masked, as RFC 7748
 * asks. Stateless and thread safe.
 */
public final class X25519 {
  /** Length of a raw public key, a private scalar and a shared secret. */
  public static final int KEY_LENGTH = 32;

  /** One side's ephemeral key pair; {@code publicKey} is raw. */
  public record KeyPair(PrivateKey privateKey, byte[] publicKey) {}

  private X25519() {}

  /** A fresh key pair from {@code random}. */
  public static KeyPair generate(SecureRandom random) {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("X25519");
      generator.initialize(NamedParameterSpec.X25519, random);
      java.security.KeyPair pair = generator.generateKeyPair();
      return new KeyPair(pair.getPrivate(), encode(((XECPublicKey) pair.getPublic()).getU()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("X25519 unavailable", e);
    }
  }

  /** The key pair of a given private scalar (32 bytes, as RFC 7748 writes them; clamped by X25519 itself). */
  public static KeyPair fromPrivate(byte[] scalar) {
    if (scalar.length != KEY_LENGTH) {
      throw new IllegalArgumentException("an X25519 private key is " + KEY_LENGTH + " bytes, not " + scalar.length);
    }
    return generate(new FixedRandom(scalar));
  }

  /**
   * X25519(own private key, peer's public key).
   *
   * @throws AuthenticationFailedException if the peer's key is a point of small order, which makes
   *     the shared secret all zeros (RFC 7748 section 6.1), or is not a key at all
   */
  public static byte[] agree(PrivateKey own, byte[] peerPublic) throws AuthenticationFailedException {
    if (peerPublic.length != KEY_LENGTH) {
      throw new AuthenticationFailedException("peer's ephemeral key is " + peerPublic.length + " bytes");
    }
    byte[] shared;
    try {
      KeyAgreement agreement = KeyAgreement.getInstance("XDH");
      agreement.init(own);
      agreement.doPhase(KeyFactory.getInstance("XDH").generatePublic(
          new XECPublicKeySpec(NamedParameterSpec.X25519, decode(peerPublic))), true);
      shared = agreement.generateSecret();
    } catch (InvalidKeyException e) {
      throw new AuthenticationFailedException("peer's ephemeral key is a point of small order: " + e.getMessage());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("X25519 unavailable", e);
    }
    int any = 0;
    for (byte b : shared) {
      any |= b;
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
