package io.sluice.transport.handshake;

import io.sluice.transport.crypto.X25519;
import io.sluice.transport.wire.Frames;
import java.security.SecureRandom;

/**
 * Where one side of a handshake draws its fresh values: its nonce and its ephemeral X25519 key
 * pair. Connections use {@link #SECURE}; test vectors inject fixed values. Implementations are
 * thread safe.
 */
interface Ephemerals {
  /** A fresh {@link Frames#NONCE_LENGTH}-byte nonce. */
  byte[] nonce();

  /** A fresh X25519 key pair. */
  X25519.KeyPair keyPair();

  /** Both from the platform's strong source. */
  Ephemerals SECURE = new Ephemerals() {
    private final SecureRandom random = new SecureRandom();

    @Override
    public byte[] nonce() {
      byte[] n = new byte[Frames.NONCE_LENGTH];
      random.nextBytes(n);
      return n;
    }

    @Override
    public X25519.KeyPair keyPair() {
      return X25519.generate(random);
    }
  };
}
