package io.sluice.transport.crypto;

import java.util.Optional;

/**
 * {@link Curves} through OpenSSL's libcrypto, by {@code libsluice-crypto.so}
 * (transport/src/main/c/curves.c), the library {@link OpenSslAesGcm} loads: it is usable only
 * where that one is. Each call builds the OpenSSL keys it needs from the raw bytes and frees them
 * before it returns; nothing native outlives a call. Stateless and thread safe.
 */
final class OpenSslCurves extends Curves {
  private static final OpenSslCurves INSTANCE = new OpenSslCurves();

  private OpenSslCurves() {}

  /** The implementation, or empty where the library or libcrypto did not load or bind. */
  static Optional<Curves> instance() {
    return Library.CAUSE == null ? Optional.of(INSTANCE) : Optional.empty();
  }

  /** Why {@link #instance} is empty, if it is. */
  static Optional<String> unavailabilityCause() {
    return Optional.ofNullable(Library.CAUSE);
  }

  @Override
  public String id() {
    return "openssl";
  }

  @Override
  public byte[] x25519Public(byte[] scalar) {
    check(scalar, "an X25519 scalar");
    byte[] out = new byte[KEY_LENGTH];
    if (!x25519Public(scalar, out)) {
      throw new IllegalStateException("OpenSSL could not compute an X25519 public key");
    }
    return out;
  }

  @Override
  public byte[] x25519(byte[] scalar, byte[] peer) {
    check(scalar, "an X25519 scalar");
    check(peer, "an X25519 public key");
    byte[] out = new byte[KEY_LENGTH];
    int r = x25519(scalar, peer, out);
    if (r < 0) {
      throw new IllegalStateException("OpenSSL could not run X25519");
    }
    return r == 1 ? out : null;
  }

  @Override
  public byte[] ed25519Public(byte[] seed) {
    check(seed, "an Ed25519 seed");
    byte[] out = new byte[KEY_LENGTH];
    if (!ed25519Public(seed, out)) {
      throw new IllegalStateException("OpenSSL could not compute an Ed25519 public key");
    }
    return out;
  }

  @Override
  public byte[] ed25519Sign(byte[] seed, byte[] message) {
    check(seed, "an Ed25519 seed");
    byte[] out = new byte[SIGNATURE_LENGTH];
    if (!ed25519Sign(seed, message, out)) {
      throw new IllegalStateException("OpenSSL could not sign with Ed25519");
    }
    return out;
  }

  @Override
  public boolean ed25519Verify(byte[] publicKey, byte[] message, byte[] signature) {
    if (publicKey.length != KEY_LENGTH || signature.length != SIGNATURE_LENGTH) {
      return false;
    }
    // -1 (OpenSSL out of memory) fails closed as a refusal.
    return ed25519Check(publicKey, message, signature) == 1;
  }

  private static final class Library {
    static final String CAUSE = load();

    private static String load() {
      Optional<String> missing = OpenSslAesGcm.unavailabilityCause();
      if (missing.isPresent()) {
        return missing.get();
      }
      try {
        return bind();
      } catch (LinkageError e) {
        return "cannot bind the curves of libsluice-crypto.so: " + e;
      }
    }
  }

  private static native String bind();

  private static native boolean x25519Public(byte[] scalar, byte[] out);

  /** 1: done; 0: an all-zero result (small order); -1: bad lengths or no memory. */
  private static native int x25519(byte[] scalar, byte[] peer, byte[] out);

  private static native boolean ed25519Public(byte[] seed, byte[] out);

  private static native boolean ed25519Sign(byte[] seed, byte[] message, byte[] out);

  /** 1: verifies; 0: does not, or the key is no point; -1: no memory. */
  private static native int ed25519Check(byte[] publicKey, byte[] message, byte[] signature);
}
