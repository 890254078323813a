package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
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

  @Test
  void theRememberedLargeOrderCheckNeverRemembersARefusal() throws Exception {
    byte[] neutral = new byte[32];
    neutral[0] = 1; // the neutral point: small order
    byte[] good = NodeIdentity.generate().publicKey();
    for (int i = 0; i < 3; i++) {
      org.junit.jupiter.api.Assertions.assertFalse(NodeIdentity.knownLargeOrder(neutral));
      org.junit.jupiter.api.Assertions.assertTrue(NodeIdentity.knownLargeOrder(good));
    }
    byte[] copy = good.clone();
    copy[5] ^= 1;
    org.junit.jupiter.api.Assertions.assertEquals(NodeIdentity.isCanonicalOfLargeOrder(copy),
        NodeIdentity.knownLargeOrder(copy), "a key one bit away is checked, not taken from the cache");
    for (int i = 0; i < 5000; i++) { // past the bound: it starts again
      NodeIdentity.knownLargeOrder(NodeIdentity.generate().publicKey());
    }
    org.junit.jupiter.api.Assertions.assertFalse(NodeIdentity.knownLargeOrder(neutral));
    org.junit.jupiter.api.Assertions.assertTrue(NodeIdentity.knownLargeOrder(good));
  }
}
