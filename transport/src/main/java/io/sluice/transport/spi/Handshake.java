package io.sluice.transport.spi;

import io.sluice.transport.AuthenticationFailedException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response authentication from a shared secret, and the keys of the
 * connection that follows; the secret never crosses the wire. Every HMAC below is keyed with
 * key = PBKDF2-HMAC-SHA256(secret, "sluice/handshake/" | salt, {@link #ITERATIONS} iterations),
 * derived once per secret and salt in a process, so someone who records a handshake pays that
 * derivation for every secret they guess, and the salt ({@code sluice.transport.secretSalt}, the
 * same on every peer of a deployment) makes guesses computed for one deployment useless for
 * another.
 *
 * <p>The client sends a nonce, its flags, its node id and its public key (HELLO); the server
 * checks that the id is the one the key derives ({@link NodeIdentity}) and answers with its own
 * nonce, flags, node id, public key and the proof HMAC-SHA256(secret, "sluice/server" |
 * transcript) (CHALLENGE); the client checks the server's id against its key and the proof, and
 * answers with HMAC-SHA256(secret, "sluice/client" | transcript) and its Ed25519 signature of
 * "sluice/sign/client" | transcript (AUTH); the server checks both and sends AUTH_OK, the first
 * frame under the record protection of {@link RecordLayer}, carrying its own signature of
 * "sluice/sign/server" | transcript, which the client checks last. The transcript is both
 * nonces, both node ids, both flag bytes and both public keys, so neither a replayed proof, nor a
 * stripped encryption flag, nor a swapped key survives. Distinct labels keep one side's proof or
 * signature from being replayed as the other's.
 *
 * <p>The secret decides who may talk at all; the signatures decide which node is talking: a
 * peer that holds the secret but not a node's private key cannot claim that node's id, so
 * grants and readers bound to a node id are bound to the key pair behind it. The server spends
 * a signature only on a client that proved the secret.
 *
 * <p>Keys: prk = HMAC-SHA256(secret, "sluice/keys" | transcript); the client-to-server key is
 * HMAC-SHA256(prk, "sluice/c2s" | mode) and the server-to-client key HMAC-SHA256(prk,
 * "sluice/s2c" | mode), where mode is "mac" or "aead". Fresh nonces make every connection's keys
 * fresh; the two directions never share a key. Immutable and thread safe.
 */
public final class Handshake {
  /** HELLO/CHALLENGE flag: this side asks for an encrypted connection. */
  public static final int FLAG_ENCRYPT = 1;

  /** PBKDF2 iterations of the key derivation. */
  static final int ITERATIONS = 20_000;
  private static final String DEFAULT_SALT = "sluice";
  /** Derived keys by secret and salt: each pair is derived once per process. Bounded; cleared when full. */
  private static final Map<List<String>, byte[]> DERIVED = new ConcurrentHashMap<>();
  private static final int DERIVED_MAX = 64;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String CLIENT_SIGNATURE = "sluice/sign/client";
  private static final String SERVER_SIGNATURE = "sluice/sign/server";
  private final SecretKeySpec key;

  /**
   * What both sides said in HELLO and CHALLENGE; proofs, signatures and keys are bound to all of
   * it.
   */
  public record Transcript(byte[] clientNonce, byte[] serverNonce, long clientNode, long serverNode,
      int clientFlags, int serverFlags, byte[] clientKey, byte[] serverKey) {
    /** Encryption is on when either side asks for it. */
    public boolean encrypted() {
      return ((clientFlags | serverFlags) & FLAG_ENCRYPT) != 0;
    }

    byte[] bytes() {
      return ByteBuffer.allocate(clientNonce.length + serverNonce.length + 18 + clientKey.length + serverKey.length)
          .put(clientNonce).put(serverNonce).putLong(clientNode).putLong(serverNode)
          .put((byte) clientFlags).put((byte) serverFlags).put(clientKey).put(serverKey).array();
    }
  }

  /** The two directions' keys of one connection, and whether they encrypt. */
  public record SessionKeys(byte[] clientToServer, byte[] serverToClient, boolean encrypted) {}

  /** A handshake with the default salt. */
  public Handshake(String secret) {
    this(secret, DEFAULT_SALT);
  }

  public Handshake(String secret, String salt) {
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException(
          "a shared secret is required (" + io.sluice.transport.TransportOption.SECRET.key() + ")");
    }
    this.key = new SecretKeySpec(derive(secret, salt), "HmacSHA256");
  }

  private static byte[] derive(String secret, String salt) {
    List<String> id = List.of(secret, salt);
    byte[] known = DERIVED.get(id);
    if (known != null) {
      return known;
    }
    byte[] derived;
    try {
      PBEKeySpec spec = new PBEKeySpec(secret.toCharArray(),
          ("sluice/handshake/" + salt).getBytes(StandardCharsets.UTF_8), ITERATIONS, 256);
      derived = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
      spec.clearPassword();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 unavailable", e);
    }
    if (DERIVED.size() >= DERIVED_MAX) {
      DERIVED.clear();
    }
    DERIVED.put(id, derived);
    return derived;
  }

  public static byte[] nonce() {
    byte[] n = new byte[Frames.NONCE_LENGTH];
    RANDOM.nextBytes(n);
    return n;
  }

  public byte[] serverProof(Transcript t) {
    return hmac(key, "sluice/server", t.bytes());
  }

  public byte[] clientProof(Transcript t) {
    return hmac(key, "sluice/client", t.bytes());
  }

  /** The client's signature of {@code t}; {@code self} is the client. */
  public static byte[] clientSignature(NodeIdentity self, Transcript t) {
    return self.sign(CLIENT_SIGNATURE, t.bytes());
  }

  /** The server's signature of {@code t}; {@code self} is the server. */
  public static byte[] serverSignature(NodeIdentity self, Transcript t) {
    return self.sign(SERVER_SIGNATURE, t.bytes());
  }

  /** @throws AuthenticationFailedException unless {@code signature} is the client's of {@code t} */
  public static void checkClientSignature(Transcript t, byte[] signature) throws AuthenticationFailedException {
    if (!NodeIdentity.verifies(t.clientKey(), CLIENT_SIGNATURE, t.bytes(), signature)) {
      throw new AuthenticationFailedException(String.format(
          "client's signature does not verify with the public key of node %016x", t.clientNode()));
    }
  }

  /** @throws AuthenticationFailedException unless {@code signature} is the server's of {@code t} */
  public static void checkServerSignature(Transcript t, byte[] signature) throws AuthenticationFailedException {
    if (!NodeIdentity.verifies(t.serverKey(), SERVER_SIGNATURE, t.bytes(), signature)) {
      throw new AuthenticationFailedException(String.format(
          "server's signature does not verify with the public key of node %016x", t.serverNode()));
    }
  }

  /** The record keys of the connection this transcript authenticated. */
  public SessionKeys sessionKeys(Transcript t) {
    SecretKeySpec prk = new SecretKeySpec(hmac(key, "sluice/keys", t.bytes()), "HmacSHA256");
    String mode = t.encrypted() ? "aead" : "mac";
    byte[] c2s = hmac(prk, "sluice/c2s", mode.getBytes(StandardCharsets.US_ASCII));
    byte[] s2c = hmac(prk, "sluice/s2c", mode.getBytes(StandardCharsets.US_ASCII));
    if (t.encrypted()) {
      c2s = Arrays.copyOf(c2s, RecordLayer.AES_KEY_LENGTH);
      s2c = Arrays.copyOf(s2c, RecordLayer.AES_KEY_LENGTH);
    }
    return new SessionKeys(c2s, s2c, t.encrypted());
  }

  /** Constant-time comparison. */
  public static boolean matches(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  private static byte[] hmac(SecretKeySpec key, String label, byte[] data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      mac.update(label.getBytes(StandardCharsets.US_ASCII));
      mac.update(data);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
