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
    if (!isCanonicalOfLargeOrder(publicKey)) {
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

  /**
   * The y-coordinates (32 bytes little-endian, x's sign bit clear) of the eight points of order
   * dividing 8: 1 (the neutral point), p - 1 (order 2), 0 (the two of order 4) and the two
   * y-coordinates shared by the four of order 8. A point is of small order exactly when its y is
   * one of these: [8]P depends on y alone.
   */
  private static final byte[][] SMALL_ORDER_Y = {
      java.util.HexFormat.of().parseHex("0100000000000000000000000000000000000000000000000000000000000000"),
      java.util.HexFormat.of().parseHex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
      java.util.HexFormat.of().parseHex("0000000000000000000000000000000000000000000000000000000000000000"),
      java.util.HexFormat.of().parseHex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
      java.util.HexFormat.of().parseHex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
  };

  /**
   * Whether {@code key} encodes its y below p (RFC 8032 refuses the others) and, if it is a point
   * at all, one whose order is not a divisor of 8: its y (x's sign bit cleared) is none of the
   * small-order points' ({@link #SMALL_ORDER_Y}). Equal to computing [8]P from x² and y and
   * comparing it with the neutral element (0, 1), as the protocol states it, without the modular
   * arithmetic. A key that is no point is left to signature verification, which refuses it.
   */
  static boolean isCanonicalOfLargeOrder(byte[] key) {
    if (key == null || key.length != PUBLIC_KEY_LENGTH) {
      return false;
    }
    byte[] y = key.clone();
    y[PUBLIC_KEY_LENGTH - 1] &= 0x7f; // the sign of x
    if (!belowP(y)) {
      return false;
    }
    for (byte[] small : SMALL_ORDER_Y) {
      if (java.util.Arrays.equals(y, small)) {
        return false;
      }
    }
    return true;
  }

  /** Whether 32 bytes little-endian, top bit clear, hold a number below p = 2^255 - 19. */
  private static boolean belowP(byte[] y) {
    if (y[PUBLIC_KEY_LENGTH - 1] != 0x7f) {
      return true;
    }
    for (int i = PUBLIC_KEY_LENGTH - 2; i > 0; i--) {
      if (y[i] != (byte) 0xff) {
        return true;
      }
    }
    return (y[0] & 0xff) < 0xed;
  }
}
