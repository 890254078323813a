package io.sluice.transport.handshake;

import io.sluice.transport.crypto.X25519;
import io.sluice.transport.wire.Frames;

/**
 * The same nonce and X25519 key pair every time: one side's randomness made repeatable, for test
 * vectors and for tests that compare what two differently configured sides send. Immutable.
 */
final class FixedEphemerals implements Ephemerals {
  private final byte[] nonce;
  private final byte[] scalar;

  FixedEphemerals(byte[] nonce, byte[] scalar) {
    this.nonce = nonce.clone();
    this.scalar = scalar.clone();
  }

  /** Nonce and scalar filled with {@code seed}, {@code seed + 1}, ... */
  static FixedEphemerals counting(int seed) {
    byte[] nonce = new byte[Frames.NONCE_LENGTH];
    byte[] scalar = new byte[X25519.KEY_LENGTH];
    for (int i = 0; i < nonce.length; i++) {
      nonce[i] = (byte) (seed + i);
      scalar[i] = (byte) (seed + 64 + i);
    }
    return new FixedEphemerals(nonce, scalar);
  }

  @Override
  public byte[] nonce() {
    return nonce.clone();
  }

  @Override
  public X25519.KeyPair keyPair() {
    return X25519.fromPrivate(scalar);
  }
}
