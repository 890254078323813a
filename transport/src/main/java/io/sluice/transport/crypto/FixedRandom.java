package io.sluice.transport.crypto;

import java.security.SecureRandom;

/**
 * A "random" source that hands out one given value once: how a key pair is made from a given
 * private key with the JDK's own generators (Ed25519 and X25519 draw exactly the private key's
 * 32 bytes and compute the public key from them). Not thread safe; for one key pair.
 */
public final class FixedRandom extends SecureRandom {
  private static final long serialVersionUID = 1L;
  private final byte[] value;
  private boolean used;

  public FixedRandom(byte[] value) {
    this.value = value.clone();
  }

  @Override
  public void nextBytes(byte[] bytes) {
    if (used || bytes.length != value.length) {
      throw new IllegalStateException("a key generator asked for " + bytes.length + " bytes where one value of "
          + value.length + " was given");
    }
    used = true;
    System.arraycopy(value, 0, bytes, 0, bytes.length);
  }
}
