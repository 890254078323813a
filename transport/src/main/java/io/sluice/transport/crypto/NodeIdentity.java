package io.sluice.transport.crypto;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * Who a transport is: an Ed25519 key pair made when the transport opens, and the node id derived
 * from its public key, the first 8 bytes (big-endian) of SHA-256("sluice/node" | public key). A
 * peer proves its node id in the handshake by signing the transcript with the key the id is
 * derived from ({@code Handshake}), so no one can claim a node id without that node's private
 * key, which never leaves the process. The ids {@link Transport#ANY_PEER} and {@link
 * Transport#GRANTED_ONLY} mean something else in grants; a key pair deriving either is thrown
 * away and another made, and a peer whose key derives either is refused.
 *
 * <p>Public keys travel raw, 32 bytes as RFC 8032 encodes them; signatures are 64 bytes. The
 * private key is RFC 8032's 32-byte seed, kept in this object; the JVM's {@link Curves} signs and
 * verifies. Immutable and thread safe.
 */
public final class NodeIdentity {
  /** Length of a raw Ed25519 public key. */
  public static final int PUBLIC_KEY_LENGTH = 32;
  /** Length of an Ed25519 signature. */
  public static final int SIGNATURE_LENGTH = 64;
  private static final byte[] NODE_LABEL = "sluice/node".getBytes(StandardCharsets.US_ASCII);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final byte[] seed;
  private final byte[] publicKey;
  private final long nodeId;

  private NodeIdentity(byte[] seed, byte[] publicKey) {
    this.seed = seed;
    this.publicKey = publicKey;
    this.nodeId = derivedNodeId(publicKey);
  }

  /** A new key pair whose node id is not a reserved one. */
  public static NodeIdentity generate() {
    Curves curves = Curves.chosen();
    while (true) {
      byte[] seed = new byte[PUBLIC_KEY_LENGTH];
      RANDOM.nextBytes(seed);
      NodeIdentity identity = new NodeIdentity(seed, curves.ed25519Public(seed));
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
  public static NodeIdentity fromSeed(byte[] seed) {
    if (seed.length != PUBLIC_KEY_LENGTH) {
      throw new IllegalArgumentException("an Ed25519 seed is " + PUBLIC_KEY_LENGTH + " bytes, not " + seed.length);
    }
    NodeIdentity identity = new NodeIdentity(seed.clone(), Curves.chosen().ed25519Public(seed));
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
  public static void checkClaim(String who, long claimed, byte[] publicKey) throws AuthenticationFailedException {
    if (!knownLargeOrder(publicKey)) {
      // The small-order keys verify forged signatures (the neutral point verifies R = neutral,
      // S = 0 for every message), so their node ids would prove no private key.
      throw new AuthenticationFailedException(who + "'s public key is not a canonical Ed25519 key of large order");
    }
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
  public byte[] sign(String label, byte[] data) {
    return Curves.chosen().ed25519Sign(seed, labelled(label, data));
  }

  /**
   * Whether {@code signature} is the signature of {@code label} | {@code data} by the holder of
   * {@code publicKey}; false also for a key or signature that is not well formed.
   */
  public static boolean verifies(byte[] publicKey, String label, byte[] data, byte[] signature) {
    if (publicKey.length != PUBLIC_KEY_LENGTH || signature.length != SIGNATURE_LENGTH) {
      return false;
    }
    return Curves.chosen().ed25519Verify(publicKey, labelled(label, data), signature);
  }

  private static byte[] labelled(String label, byte[] data) {
    byte[] l = label.getBytes(StandardCharsets.US_ASCII);
    byte[] m = new byte[l.length + data.length];
    System.arraycopy(l, 0, m, 0, l.length);
    System.arraycopy(data, 0, m, l.length, data.length);
    return m;
  }

  @Override
  public String toString() {
    return String.format("NodeIdentity[%016x]", nodeId);
  }

  private static final java.math.BigInteger P = java.math.BigInteger.TWO.pow(255).subtract(java.math.BigInteger.valueOf(19));
  /** The curve's d = -121665 / 121666 mod p (RFC 8032). */
  private static final java.math.BigInteger D = java.math.BigInteger.valueOf(-121665)
      .multiply(java.math.BigInteger.valueOf(121666).modInverse(P)).mod(P);

  /**
   * Keys that passed {@link #isCanonicalOfLargeOrder}: a peer presents the same identity key on
   * every connection, so the check (a few modular inversions) runs once per key. Bounded: when
   * full it starts again empty, so keys sent to fill it only cost their senders' checks again.
   */
  private static final int LARGE_ORDER_CACHE = 4096;
  private static final java.util.Set<java.nio.ByteBuffer> LARGE_ORDER =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** {@link #isCanonicalOfLargeOrder}, remembered for keys that pass. */
  static boolean knownLargeOrder(byte[] key) {
    if (key == null || key.length != PUBLIC_KEY_LENGTH) {
      return false;
    }
    java.nio.ByteBuffer k = java.nio.ByteBuffer.wrap(key.clone());
    if (LARGE_ORDER.contains(k)) {
      return true;
    }
    if (!isCanonicalOfLargeOrder(key)) {
      return false;
    }
    if (LARGE_ORDER.size() >= LARGE_ORDER_CACHE) {
      LARGE_ORDER.clear();
    }
    LARGE_ORDER.add(k);
    return true;
  }

  /**
   * Whether {@code key} encodes its y below p (RFC 8032 refuses the others) and, if it is a point
   * at all, one whose order is not a divisor of 8. Computes [8]P from x² and y alone (the doubling
   * of the twisted Edwards curve with a = -1 needs only x², and is complete on it): the point is of
   * small order exactly when [8]P is the neutral element (0, 1). A key that is no point is left to
   * signature verification, which refuses it.
   */
  static boolean isCanonicalOfLargeOrder(byte[] key) {
    if (key == null || key.length != PUBLIC_KEY_LENGTH) {
      return false;
    }
    byte[] be = new byte[PUBLIC_KEY_LENGTH];
    for (int i = 0; i < PUBLIC_KEY_LENGTH; i++) {
      be[i] = key[PUBLIC_KEY_LENGTH - 1 - i];
    }
    be[0] &= 0x7f; // the sign of x
    java.math.BigInteger y = new java.math.BigInteger(1, be);
    if (y.compareTo(P) >= 0) {
      return false;
    }
    try {
      java.math.BigInteger yy = y.multiply(y).mod(P);
      // x² = (y² - 1) / (d y² + 1)
      java.math.BigInteger xx = yy.subtract(java.math.BigInteger.ONE)
          .multiply(D.multiply(yy).add(java.math.BigInteger.ONE).modInverse(P)).mod(P);
      for (int i = 0; i < 3; i++) {
        yy = y.multiply(y).mod(P);
        java.math.BigInteger sum = yy.add(xx).mod(P);
        java.math.BigInteger diff = yy.subtract(xx).mod(P);
        // x3² = 4 x² y² / (y² - x²)², y3 = (y² + x²) / (2 + x² - y²)
        java.math.BigInteger nextXx = java.math.BigInteger.valueOf(4).multiply(xx).multiply(yy)
            .multiply(diff.multiply(diff).modInverse(P)).mod(P);
        y = sum.multiply(java.math.BigInteger.TWO.add(xx).subtract(yy).mod(P).modInverse(P)).mod(P);
        xx = nextXx;
      }
      return !(xx.signum() == 0 && y.equals(java.math.BigInteger.ONE));
    } catch (ArithmeticException notAPoint) {
      return true; // no inverse: not on the curve; verification refuses it
    }
  }
}
