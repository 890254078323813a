package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A node id is the hash of a public key, and only the private key's holder signs for it. */
class NodeIdentityTest {
  private static final byte[] DATA = "transcript".getBytes(StandardCharsets.US_ASCII);

  @Test
  void theNodeIdIsTheHashOfThePublicKey() throws Exception {
    NodeIdentity a = NodeIdentity.generate();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update("sluice/node".getBytes(StandardCharsets.US_ASCII));
    sha.update(a.publicKey());
    assertEquals(ByteBuffer.wrap(sha.digest()).getLong(), a.nodeId());
    assertEquals(NodeIdentity.PUBLIC_KEY_LENGTH, a.publicKey().length);
    assertEquals(a.nodeId(), NodeIdentity.derivedNodeId(a.publicKey()));
    NodeIdentity b = NodeIdentity.generate();
    assertNotEquals(a.nodeId(), b.nodeId());
    for (NodeIdentity i : new NodeIdentity[] {a, b}) {
      assertNotEquals(Transport.ANY_PEER, i.nodeId());
      assertNotEquals(Transport.GRANTED_ONLY, i.nodeId());
    }
  }

  @Test
  void aSignatureVerifiesOnlyWithItsKeyLabelAndData() {
    NodeIdentity a = NodeIdentity.generate();
    NodeIdentity b = NodeIdentity.generate();
    byte[] sig = a.sign("label", DATA);
    assertEquals(NodeIdentity.SIGNATURE_LENGTH, sig.length);
    assertTrue(NodeIdentity.verifies(a.publicKey(), "label", DATA, sig));
    assertFalse(NodeIdentity.verifies(b.publicKey(), "label", DATA, sig), "verified with another node's key");
    assertFalse(NodeIdentity.verifies(a.publicKey(), "other", DATA, sig), "verified under another label");
    assertFalse(NodeIdentity.verifies(a.publicKey(), "label", "transcripT".getBytes(StandardCharsets.US_ASCII), sig));
    byte[] flipped = sig.clone();
    flipped[10] ^= 1;
    assertFalse(NodeIdentity.verifies(a.publicKey(), "label", DATA, flipped));
    assertFalse(NodeIdentity.verifies(a.publicKey(), "label", DATA, new byte[NodeIdentity.SIGNATURE_LENGTH]));
    assertFalse(NodeIdentity.verifies(new byte[NodeIdentity.PUBLIC_KEY_LENGTH], "label", DATA, sig));
    byte[] notAPoint = new byte[NodeIdentity.PUBLIC_KEY_LENGTH];
    Arrays.fill(notAPoint, (byte) 0xff);
    assertFalse(NodeIdentity.verifies(notAPoint, "label", DATA, sig), "a key off the curve");
    assertFalse(NodeIdentity.verifies(new byte[5], "label", DATA, sig), "a short key");
    assertFalse(NodeIdentity.verifies(a.publicKey(), "label", DATA, new byte[5]), "a short signature");
  }

  @Test
  void aClaimMustBeTheIdTheKeyDerives() throws Exception {
    NodeIdentity a = NodeIdentity.generate();
    NodeIdentity b = NodeIdentity.generate();
    NodeIdentity.checkClaim("client", a.nodeId(), a.publicKey());
    AuthenticationFailedException e = assertThrows(AuthenticationFailedException.class,
        () -> NodeIdentity.checkClaim("client", b.nodeId(), a.publicKey()));
    assertTrue(e.getMessage().contains(String.format("%016x", b.nodeId()))
        && e.getMessage().contains(String.format("%016x", a.nodeId())) && e.getMessage().startsWith("client"),
        "the error names the role, the claimed and the derived id: " + e.getMessage());
  }

  /**
   * The protocol's statement of the check (docs/protocol.md, 2.1): y below p, and [8]P, computed
   * from x² and y by three doublings mod p, not the neutral element (0, 1); a y that is no point
   * passes, for signature verification to refuse.
   */
  private static boolean largeOrderAsTheProtocolStatesIt(byte[] key) {
    BigInteger p = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
    BigInteger d = BigInteger.valueOf(-121665).multiply(BigInteger.valueOf(121666).modInverse(p)).mod(p);
    BigInteger y = X25519.decode(key); // the same 32 bytes little-endian, top bit masked
    if (y.compareTo(p) >= 0) {
      return false;
    }
    try {
      BigInteger yy = y.multiply(y).mod(p);
      BigInteger xx = yy.subtract(BigInteger.ONE).multiply(d.multiply(yy).add(BigInteger.ONE).modInverse(p)).mod(p);
      if (xx.signum() != 0 && xx.modPow(p.subtract(BigInteger.ONE).shiftRight(1), p).compareTo(BigInteger.ONE) != 0) {
        return true; // x² is no square: no point
      }
      for (int i = 0; i < 3; i++) {
        yy = y.multiply(y).mod(p);
        BigInteger sum = yy.add(xx).mod(p);
        BigInteger diff = yy.subtract(xx).mod(p);
        BigInteger nextXx = BigInteger.valueOf(4).multiply(xx).multiply(yy).multiply(diff.multiply(diff).modInverse(p))
            .mod(p);
        y = sum.multiply(BigInteger.TWO.add(xx).subtract(yy).mod(p).modInverse(p)).mod(p);
        xx = nextXx;
      }
      return !(xx.signum() == 0 && y.equals(BigInteger.ONE));
    } catch (ArithmeticException noInverse) {
      return true;
    }
  }

  @Test
  void theLargeOrderCheckIsTheProtocolsComputation() throws Exception {
    List<byte[]> keys = new ArrayList<>();
    BigInteger p = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
    // Every small-order y, its neighbours, the values around p and 2^255, each with x's sign either way.
    BigInteger y8 = X25519.decode(HexFormat.of().parseHex(
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"));
    for (BigInteger y : List.of(BigInteger.ZERO, BigInteger.ONE, p.subtract(BigInteger.ONE), y8, p.subtract(y8))) {
      for (int delta = -2; delta <= 2; delta++) {
        keys.add(X25519.encode(y.add(BigInteger.valueOf(delta)).mod(p)));
      }
      assertFalse(largeOrderAsTheProtocolStatesIt(X25519.encode(y)), y + " is a small-order y");
    }
    for (int delta = -3; delta <= 20; delta++) {
      keys.add(X25519.encode(p.add(BigInteger.valueOf(delta)))); // around p, non-canonical above it
    }
    keys.add(X25519.encode(BigInteger.TWO.pow(255).subtract(BigInteger.ONE)));
    Random random = new Random(20261130);
    for (int i = 0; i < 2000; i++) {
      byte[] k = new byte[32];
      random.nextBytes(k);
      keys.add(k);
    }
    for (int i = 0; i < 50; i++) {
      keys.add(NodeIdentity.generate().publicKey());
    }
    for (byte[] key : keys) {
      for (int sign = 0; sign < 2; sign++) {
        byte[] k = key.clone();
        k[31] = (byte) ((k[31] & 0x7f) | (sign << 7));
        assertEquals(largeOrderAsTheProtocolStatesIt(k), NodeIdentity.isCanonicalOfLargeOrder(k),
            HexFormat.of().formatHex(k));
      }
    }
  }

  @Test
  void aSmallOrderIdentityIsRefusedWhateverItsSign() {
    for (String hex : new String[] {
        "0100000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000080",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"}) {
      byte[] key = HexFormat.of().parseHex(hex);
      AuthenticationFailedException e = assertThrows(AuthenticationFailedException.class,
          () -> NodeIdentity.checkClaim("client", NodeIdentity.derivedNodeId(key), key));
      assertTrue(e.getMessage().contains("not a canonical Ed25519 key of large order"), e.getMessage());
    }
  }
}
