package io.sluice.transport.spi;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.NamedParameterSpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;

/**
 * Who a transport is: an Ed25519 key pair made when the transport opens, and the node id derived
 * from its public key, the first 8 bytes (big-endian) of SHA-256("sluice/node" | public key). A
 * peer proves its node id in the handshake by signing the transcript with the key the id is
 * derived from ({@link Handshake}), so no one can claim a node id without that node's private
 * key, which never leaves the process. The ids {@link Transport#ANY_PEER} and {@link
 * Transport#GRANTED_ONLY} mean something else in grants; a key pair deriving either is thrown
 * away and another made, and a peer whose key derives either is refused.
 *
 * <p>Public keys travel raw, 32 bytes as RFC 8032 encodes them; signatures are 64 bytes.
 * Immutable and thread safe.
 */
public final class NodeIdentity {
  /** Length of a raw Ed25519 public key. */
  public static final int PUBLIC_KEY_LENGTH = 32;
  /** Length of an Ed25519 signature. */
  public static final int SIGNATURE_LENGTH = 64;
  private static final String ALGORITHM = "Ed25519";
  /** The DER prefix of an X.509 SubjectPublicKeyInfo holding a raw Ed25519 key (RFC 8410). */
  private static final byte[] X509_PREFIX = {
      0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
  private static final byte[] NODE_LABEL = "sluice/node".getBytes(StandardCharsets.US_ASCII);

  private final KeyPair keys;
  private final byte[] publicKey;
  private final long nodeId;

  private NodeIdentity(KeyPair keys, byte[] publicKey) {
    this.keys = keys;
    this.publicKey = publicKey;
    this.nodeId = derivedNodeId(publicKey);
  }

  /** A new key pair whose node id is not a reserved one. */
  public static NodeIdentity generate() {
    KeyPairGenerator generator;
    try {
      generator = KeyPairGenerator.getInstance(ALGORITHM);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(ALGORITHM + " unavailable", e);
    }
    while (true) {
      KeyPair pair = generator.generateKeyPair();
      NodeIdentity identity = new NodeIdentity(pair, rawPublicKey(pair.getPublic()));
      if (!isReserved(identity.nodeId)) {
        return identity;
      }
    }
  }

  /**
   * The key pair of a given private key, the 32-byte seed of RFC 8032: how test vectors fix a
   * node's identity. @throws IllegalArgumentException if the seed is not 32 bytes or its node id
   * is a reserved one
   */
  static NodeIdentity fromSeed(byte[] seed) {
    if (seed.length != PUBLIC_KEY_LENGTH) {
      throw new IllegalArgumentException("an Ed25519 seed is " + PUBLIC_KEY_LENGTH + " bytes, not " + seed.length);
    }
    KeyPair pair;
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance(ALGORITHM);
      generator.initialize(NamedParameterSpec.ED25519, new FixedRandom(seed));
      pair = generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(ALGORITHM + " unavailable", e);
    }
    NodeIdentity identity = new NodeIdentity(pair, rawPublicKey(pair.getPublic()));
    if (isReserved(identity.nodeId)) {
      throw new IllegalArgumentException("this seed's key derives a reserved node id");
    }
    return identity;
  }

  public long nodeId() {
    return nodeId;
  }

  /** The raw public key (a copy). */
  public byte[] publicKey() {
    return publicKey.clone();
  }

  /** The node id {@code publicKey} (raw, {@link #PUBLIC_KEY_LENGTH} bytes) derives. */
  public static long derivedNodeId(byte[] publicKey) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(NODE_LABEL);
      sha.update(publicKey);
      return ByteBuffer.wrap(sha.digest()).getLong();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 unavailable", e);
    }
  }

  private static boolean isReserved(long id) {
    return id == Transport.ANY_PEER || id == Transport.GRANTED_ONLY;
  }

  /**
   * Checks that a peer claiming node {@code claimed} holds the key that id derives from.
   *
   * @param who the peer's role ("client", "server"), for the message
   * @throws AuthenticationFailedException naming the claimed and the derived id if they differ,
   *     or if the key derives a reserved id
   */
  static void checkClaim(String who, long claimed, byte[] publicKey) throws AuthenticationFailedException {
    long derived = derivedNodeId(publicKey);
    if (derived != claimed) {
      throw new AuthenticationFailedException(String.format(
          "%s claims node id %016x but its public key is node %016x", who, claimed, derived));
    }
    if (isReserved(derived)) {
      throw new AuthenticationFailedException(String.format(
          "%s's public key derives the reserved node id %016x", who, derived));
    }
  }

  /** This node's signature of {@code label} | {@code data}. */
  byte[] sign(String label, byte[] data) {
    try {
      Signature s = Signature.getInstance(ALGORITHM);
      s.initSign(keys.getPrivate());
      s.update(label.getBytes(StandardCharsets.US_ASCII));
      s.update(data);
      return s.sign();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(ALGORITHM + " signing failed", e);
    }
  }

  /**
   * Whether {@code signature} is the signature of {@code label} | {@code data} by the holder of
   * {@code publicKey}; false also for a key or signature that is not well formed.
   */
  static boolean verifies(byte[] publicKey, String label, byte[] data, byte[] signature) {
    if (publicKey.length != PUBLIC_KEY_LENGTH || signature.length != SIGNATURE_LENGTH) {
      return false;
    }
    try {
      Signature s = Signature.getInstance(ALGORITHM);
      s.initVerify(publicKeyOf(publicKey));
      s.update(label.getBytes(StandardCharsets.US_ASCII));
      s.update(data);
      return s.verify(signature);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false; // a point that is not on the curve, or a malformed signature
    }
  }

  private static PublicKey publicKeyOf(byte[] raw) throws GeneralSecurityException {
    byte[] der = Arrays.copyOf(X509_PREFIX, X509_PREFIX.length + PUBLIC_KEY_LENGTH);
    System.arraycopy(raw, 0, der, X509_PREFIX.length, PUBLIC_KEY_LENGTH);
    return KeyFactory.getInstance(ALGORITHM).generatePublic(new X509EncodedKeySpec(der));
  }

  private static byte[] rawPublicKey(PublicKey key) {
    byte[] der = key.getEncoded();
    if (der.length != X509_PREFIX.length + PUBLIC_KEY_LENGTH
        || !Arrays.equals(der, 0, X509_PREFIX.length, X509_PREFIX, 0, X509_PREFIX.length)) {
      throw new IllegalStateException("unexpected encoding of an " + ALGORITHM + " public key: " + der.length
          + " bytes");
    }
    return Arrays.copyOfRange(der, X509_PREFIX.length, der.length);
  }

  @Override
  public String toString() {
    return String.format("NodeIdentity[%016x]", nodeId);
  }
}
