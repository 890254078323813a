package io.sluice.transport.tcp;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication from a shared secret; the secret never crosses the
 * wire. The client sends a nonce (HELLO); the server answers with its own nonce and a proof
 * HMAC-SHA256(secret, "sluice/server" | clientNonce | serverNonce | serverNode | clientNode)
 * (CHALLENGE); the client checks it and answers with HMAC-SHA256(secret, "sluice/client" |
 * serverNonce | clientNonce | clientNode | serverNode) (AUTH); the server checks that and sends
 * AUTH_OK. Distinct labels keep one side's proof from being replayed as the other's. Immutable
 * and thread safe.
 */
public final class Handshake {
  private static final SecureRandom RANDOM = new SecureRandom();
  private final SecretKeySpec key;

  public Handshake(String secret) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException(
          "a shared secret is required (" + io.sluice.transport.TransportOption.SECRET.key() + ")");
    }
    this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
  }

  public static byte[] nonce() {
    byte[] n = new byte[Frames.NONCE_LENGTH];
    RANDOM.nextBytes(n);
    return n;
  }

  public byte[] serverProof(byte[] clientNonce, byte[] serverNonce, long serverNode, long clientNode) {
    return mac("sluice/server", clientNonce, serverNonce, serverNode, clientNode);
  }

  public byte[] clientProof(byte[] serverNonce, byte[] clientNonce, long clientNode, long serverNode) {
    return mac("sluice/client", serverNonce, clientNonce, clientNode, serverNode);
  }

  /** Constant-time comparison. */
  public static boolean matches(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  private byte[] mac(String label, byte[] first, byte[] second, long node1, long node2) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(label.getBytes(StandardCharsets.US_ASCII));
      mac.update(first);
      mac.update(second);
      mac.update(java.nio.ByteBuffer.allocate(16).putLong(node1).putLong(node2).array());
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
