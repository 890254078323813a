package io.sluice.transport.crypto;

import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.XECPublicKey;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import java.security.spec.XECPrivateKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.KeyAgreement;

/**
 * The handshake's public-key operations on raw 32-byte keys: X25519 (RFC 7748) for the ephemeral
 * agreement and Ed25519 (RFC 8032) for the identities' signatures. Private keys are the RFCs' raw
 * forms too: an X25519 scalar, an Ed25519 seed.
 *
 * <p>One implementation serves a JVM, chosen at first use ({@link #chosen}): OpenSSL's, through
 * {@code libsluice-crypto.so} ({@link OpenSslCurves}), when the library and libcrypto load and it
 * passes its {@link #selfCheck} (the RFCs' own vectors), else the JDK's. A cold JVM runs the JDK's
 * curve arithmetic interpreted: its first X25519 agreement and Ed25519 signature and verification
 * cost tens of milliseconds and later ones milliseconds until the JIT compiles them, all on the
 * path of a task's first connection; OpenSSL's cost tens of microseconds from the first. {@code
 * -Dsluice.crypto.curves=openssl|jdk} insists on one (a test, a benchmark); {@code openssl} that
 * cannot be had fails at first use, naming why. Both implementations compute the same keys, shared
 * secrets and signatures; each verifies the other's. Stateless and thread safe.
 */
public abstract class Curves {
  /** The system property that chooses: {@code auto} (the default), {@code openssl} or {@code jdk}. */
  public static final String PROPERTY = "sluice.crypto.curves";
  /** Length of every key, seed, scalar and shared secret here. */
  public static final int KEY_LENGTH = 32;
  /** Length of an Ed25519 signature. */
  public static final int SIGNATURE_LENGTH = 64;

  /** The JDK's implementation ({@code SunEC}'s XDH and EdDSA). */
  public static final Curves JDK = new Jdk();

  Curves() {}

  /** The implementation this JVM uses. @throws IllegalStateException if openssl was insisted on and cannot be had */
  public static Curves chosen() {
    Choice c = Choice.CHOSEN;
    if (c.curves == null) {
      throw new IllegalStateException(c.reason);
    }
    return c.curves;
  }

  /** Which implementation this JVM uses and why, in one line, e.g. {@code openssl (OpenSSL 3.0.13 ...)}. */
  public static String description() {
    Choice c = Choice.CHOSEN;
    return c.curves == null ? "none: " + c.reason : c.curves.id() + " (" + c.reason + ")";
  }

  /** OpenSSL's implementation, or why there is none. */
  public static Optional<Curves> openSsl() {
    return OpenSslCurves.instance();
  }

  /** {@code openssl} or {@code jdk}. */
  public abstract String id();

  /** The X25519 public key (u-coordinate, little-endian) of a 32-byte scalar. */
  public abstract byte[] x25519Public(byte[] scalar);

  /**
   * X25519(scalar, peer), the peer's u-coordinate taken with its top bit masked.
   *
   * @return the shared secret, or null when the result is all zeros (the peer's key is a point of
   *     small order, RFC 7748 section 6.1)
   */
  public abstract byte[] x25519(byte[] scalar, byte[] peer);

  /** The Ed25519 public key of a 32-byte seed. */
  public abstract byte[] ed25519Public(byte[] seed);

  /** The Ed25519 signature of {@code message} by the holder of {@code seed}. */
  public abstract byte[] ed25519Sign(byte[] seed, byte[] message);

  /** Whether {@code signature} is {@code publicKey}'s signature of {@code message}; false for anything malformed. */
  public abstract boolean ed25519Verify(byte[] publicKey, byte[] message, byte[] signature);

  /**
   * Runs RFC 7748 section 6.1 (both public keys and the shared secret, a point of small order
   * refused) and RFC 8032 section 7.1 test 2 (the public key and signature, the signature verified
   * and an altered one refused) through this implementation.
   *
   * @return what went wrong, or empty
   */
  public Optional<String> selfCheck() {
    HexFormat hex = HexFormat.of();
    try {
      byte[] alice = hex.parseHex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
      byte[] bob = hex.parseHex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
      byte[] bobPublic = x25519Public(bob);
      if (!hex.formatHex(x25519Public(alice)).equals("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
          || !hex.formatHex(bobPublic).equals("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")) {
        return Optional.of(id() + " computed a known X25519 public key wrongly");
      }
      byte[] shared = x25519(alice, bobPublic);
      if (shared == null
          || !hex.formatHex(shared).equals("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")) {
        return Optional.of(id() + " computed a known X25519 shared secret wrongly");
      }
      if (x25519(alice, new byte[KEY_LENGTH]) != null) {
        return Optional.of(id() + " agreed with a point of small order");
      }
      byte[] seed = hex.parseHex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
      byte[] message = {0x72};
      byte[] publicKey = ed25519Public(seed);
      byte[] signature = ed25519Sign(seed, message);
      if (!hex.formatHex(publicKey).equals("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c")
          || !hex.formatHex(signature).equals("92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
              + "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00")) {
        return Optional.of(id() + " made a known Ed25519 key or signature wrongly");
      }
      if (!ed25519Verify(publicKey, message, signature)) {
        return Optional.of(id() + " refused a known Ed25519 signature");
      }
      signature[0] ^= 1;
      if (ed25519Verify(publicKey, message, signature)) {
        return Optional.of(id() + " accepted an altered Ed25519 signature");
      }
      return Optional.empty();
    } catch (RuntimeException e) {
      return Optional.of(id() + " failed its self-check: " + e);
    }
  }

  @Override
  public String toString() {
    return id();
  }

  /** The choice, made once, when first asked. */
  private static final class Choice {
    static final Choice CHOSEN = choose(System.getProperty(PROPERTY, "auto"));

    final Curves curves;
    final String reason;

    private Choice(Curves curves, String reason) {
      this.curves = curves;
      this.reason = reason;
    }

    private static Choice choose(String asked) {
      switch (asked) {
        case "jdk":
          return new Choice(JDK, "jdk asked for");
        case "openssl": {
          Optional<String> problem = problem();
          return problem.isEmpty() ? new Choice(openSsl().orElseThrow(), OpenSslAesGcm.openSslVersion())
              : new Choice(null, "X25519 and Ed25519 through openssl were asked for (" + PROPERTY
                  + ") and cannot be had: " + problem.get());
        }
        case "auto":
        case "":
          return problem()
              .map(p -> new Choice(JDK, "openssl unusable: " + p))
              .orElseGet(() -> new Choice(openSsl().orElseThrow(), OpenSslAesGcm.openSslVersion()));
        default:
          return new Choice(null, PROPERTY + "='" + asked + "': expected auto, openssl or jdk");
      }
    }

    private static Optional<String> problem() {
      Optional<Curves> o = openSsl();
      return o.isEmpty() ? OpenSslCurves.unavailabilityCause() : o.get().selfCheck();
    }
  }

  /** The JDK's XDH and EdDSA, keys made from raw bytes for each operation. */
  private static final class Jdk extends Curves {
    /** The DER prefix of an X.509 SubjectPublicKeyInfo holding a raw Ed25519 key (RFC 8410). */
    private static final byte[] ED25519_X509_PREFIX = {
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

    @Override
    public String id() {
      return "jdk";
    }

    @Override
    public byte[] x25519Public(byte[] scalar) {
      check(scalar, "an X25519 scalar");
      try {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("X25519");
        generator.initialize(NamedParameterSpec.X25519, new FixedRandom(scalar));
        return X25519.encode(((XECPublicKey) generator.generateKeyPair().getPublic()).getU());
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("X25519 unavailable", e);
      }
    }

    @Override
    public byte[] x25519(byte[] scalar, byte[] peer) {
      check(scalar, "an X25519 scalar");
      check(peer, "an X25519 public key");
      try {
        KeyFactory keys = KeyFactory.getInstance("XDH");
        KeyAgreement agreement = KeyAgreement.getInstance("XDH");
        agreement.init(keys.generatePrivate(new XECPrivateKeySpec(NamedParameterSpec.X25519, scalar)));
        agreement.doPhase(keys.generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, X25519.decode(peer))),
            true);
        return agreement.generateSecret();
      } catch (java.security.InvalidKeyException e) {
        return null; // SunEC refuses an all-zero result this way
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("X25519 unavailable", e);
      }
    }

    @Override
    public byte[] ed25519Public(byte[] seed) {
      check(seed, "an Ed25519 seed");
      try {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("Ed25519");
        generator.initialize(NamedParameterSpec.ED25519, new FixedRandom(seed));
        byte[] der = generator.generateKeyPair().getPublic().getEncoded();
        if (der.length != ED25519_X509_PREFIX.length + KEY_LENGTH
            || !Arrays.equals(der, 0, ED25519_X509_PREFIX.length, ED25519_X509_PREFIX, 0, ED25519_X509_PREFIX.length)) {
          throw new IllegalStateException("unexpected encoding of an Ed25519 public key: " + der.length + " bytes");
        }
        return Arrays.copyOfRange(der, ED25519_X509_PREFIX.length, der.length);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("Ed25519 unavailable", e);
      }
    }

    @Override
    public byte[] ed25519Sign(byte[] seed, byte[] message) {
      check(seed, "an Ed25519 seed");
      try {
        Signature s = Signature.getInstance("Ed25519");
        s.initSign(KeyFactory.getInstance("Ed25519").generatePrivate(
            new EdECPrivateKeySpec(NamedParameterSpec.ED25519, seed)));
        s.update(message);
        return s.sign();
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("Ed25519 signing failed", e);
      }
    }

    @Override
    public boolean ed25519Verify(byte[] publicKey, byte[] message, byte[] signature) {
      if (publicKey.length != KEY_LENGTH || signature.length != SIGNATURE_LENGTH) {
        return false;
      }
      try {
        byte[] der = Arrays.copyOf(ED25519_X509_PREFIX, ED25519_X509_PREFIX.length + KEY_LENGTH);
        System.arraycopy(publicKey, 0, der, ED25519_X509_PREFIX.length, KEY_LENGTH);
        PublicKey key = KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
        Signature s = Signature.getInstance("Ed25519");
        s.initVerify(key);
        s.update(message);
        return s.verify(signature);
      } catch (GeneralSecurityException | IllegalArgumentException e) {
        return false; // a point that is not on the curve, or a malformed signature
      }
    }
  }

  static void check(byte[] key, String what) {
    if (key.length != KEY_LENGTH) {
      throw new IllegalArgumentException(what + " is " + KEY_LENGTH + " bytes, not " + key.length);
    }
  }
}
