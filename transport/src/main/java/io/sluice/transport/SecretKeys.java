package io.sluice.transport;

import io.sluice.transport.crypto.Hkdf;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * The one place keys are derived from the shared secret ({@code sluice.transport.secret}): psk =
 * HKDF-Extract(salt = "sluice/6/psk", IKM = the secret's UTF-8 bytes), and every key for one
 * purpose is HKDF-Expand(psk, label, length) with a label of its own (RFC 5869, HMAC-SHA256). The
 * handshake mixes psk with an ephemeral Diffie-Hellman secret before it expands anything; other
 * users of the secret (the Flight call token) expand psk under their own label, so no key of one
 * purpose is a key of another.
 *
 * <p>The derivation is fast on purpose: it does not slow down guessing, so the secret itself must
 * be hard to guess. Secrets shorter than {@link #MIN_SECRET_BYTES} bytes are refused; generate one
 * with {@code openssl rand -base64 32}. Stateless and thread safe.
 */
public final class SecretKeys {
  /** The shortest secret accepted, in UTF-8 bytes: 128 bits. */
  public static final int MIN_SECRET_BYTES = 16;
  /** The key of the secret; spelled out here because {@code TransportKeys} checks secrets with this class. */
  private static final String SECRET_KEY = "sluice.transport.secret";
  /**
   * Version 6's salt, kept by version 7: psk is no record key, and the Flight call tokens derive
   * from it, so a new protocol version has no reason to change it.
   */
  private static final byte[] PSK_SALT = "sluice/6/psk".getBytes(StandardCharsets.US_ASCII);

  private SecretKeys() {}

  /** What is wrong with {@code secret} as a shared secret, if anything; never names its value. */
  public static Optional<String> problem(String secret) {
    if (secret == null || secret.isEmpty()) {
      return Optional.of("a shared secret is required (" + SECRET_KEY + ")");
    }
    java.nio.ByteBuffer encoded;
    try {
      // Strict: a secret with an unpaired surrogate has no UTF-8 form, and the lenient encoder would
      // turn different secrets into the same bytes ("?").
      encoded = StandardCharsets.UTF_8.newEncoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .encode(java.nio.CharBuffer.wrap(secret));
    } catch (java.nio.charset.CharacterCodingException e) {
      return Optional.of(SECRET_KEY + " is not valid text (it has an unpaired surrogate); it has no UTF-8 form");
    }
    int bytes = encoded.remaining();
    if (bytes < MIN_SECRET_BYTES) {
      return Optional.of(SECRET_KEY + " is " + bytes + " bytes; it must be at least " + MIN_SECRET_BYTES
          + " bytes (128 bits) of random, e.g. the output of 'openssl rand -base64 32'");
    }
    return Optional.empty();
  }

  /** @throws IllegalArgumentException naming {@code sluice.transport.secret} if it is empty or too short */
  public static String check(String secret) {
    Optional<String> problem = problem(secret);
    if (problem.isPresent()) {
      throw new IllegalArgumentException(problem.get());
    }
    return secret;
  }

  /** psk = HKDF-Extract("sluice/6/psk", UTF-8 of {@code secret}). @throws IllegalArgumentException as {@link #check} */
  public static byte[] psk(String secret) {
    return Hkdf.extract(PSK_SALT, check(secret).getBytes(StandardCharsets.UTF_8));
  }

  /**
   * A key for one purpose: HKDF-Expand(psk, ASCII {@code label}, {@code length}). Labels start
   * with "sluice/" and name their purpose; the handshake's own labels start with "sluice/7 ".
   */
  public static byte[] derive(String secret, String label, int length) {
    return Hkdf.expand(psk(secret), label.getBytes(StandardCharsets.US_ASCII), length);
  }
}
