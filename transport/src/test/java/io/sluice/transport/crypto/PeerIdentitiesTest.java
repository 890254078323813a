package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Transport;
import org.junit.jupiter.api.Test;

/**
 * A node id names one identity key while anything holds it. No second key with a real node's id
 * can be found (that is a search of about 2^64 keys), so the tests hand a node id and another
 * node's key in, as a handshake would after such a search.
 */
class PeerIdentitiesTest {
  private static final byte[] KEY_A = NodeIdentity.generate().publicKey();
  private static final byte[] KEY_B = NodeIdentity.generate().publicKey();
  private static final long NODE = NodeIdentity.derivedNodeId(KEY_A);

  @Test
  void aSecondKeyIsRefusedWhileTheFirstIsHeldAndAdmittedOnceNothingHoldsIt() throws Exception {
    PeerIdentities peers = new PeerIdentities();
    PeerIdentities.Hold first = peers.prove(NODE, KEY_A);
    PeerIdentities.Hold again = peers.prove(NODE, KEY_A);
    AuthenticationFailedException e = assertThrows(AuthenticationFailedException.class, () -> peers.prove(NODE, KEY_B));
    assertTrue(e.getMessage().contains("another identity key"), e.getMessage());
    first.close();
    first.close();
    assertThrows(AuthenticationFailedException.class, () -> peers.prove(NODE, KEY_B), "one hold of KEY_A remains");
    again.close();
    assertEquals(0, peers.size());
    peers.prove(NODE, KEY_B).close();
  }

  @Test
  void aGrantKeepsTheKeyItsSessionProvedAfterTheSessionEnds() throws Exception {
    PeerIdentities peers = new PeerIdentities();
    PeerIdentities.Hold session = peers.prove(NODE, KEY_A);
    PeerIdentities.Hold grant = peers.name(NODE);
    session.close();
    assertArrayEquals(KEY_A, peers.keyOf(NODE).orElseThrow());
    assertThrows(AuthenticationFailedException.class, () -> peers.prove(NODE, KEY_B));
    grant.close();
    assertTrue(peers.keyOf(NODE).isEmpty());
  }

  @Test
  void aNodeIdNamedBeforeAnyProofIsBoundToTheFirstKeyToProveIt() throws Exception {
    PeerIdentities peers = new PeerIdentities();
    PeerIdentities.Hold reader = peers.name(NODE);
    assertTrue(peers.keyOf(NODE).isEmpty());
    peers.prove(NODE, KEY_B).close();
    assertArrayEquals(KEY_B, peers.keyOf(NODE).orElseThrow(), "the reader's hold keeps the key once proved");
    assertThrows(AuthenticationFailedException.class, () -> peers.prove(NODE, KEY_A));
    reader.close();
    assertEquals(0, peers.size());
  }

  @Test
  void theReaderIdsThatNameNoNodeHoldNothing() {
    PeerIdentities peers = new PeerIdentities();
    peers.name(Transport.ANY_PEER);
    peers.name(Transport.GRANTED_ONLY);
    assertEquals(0, peers.size());
  }

  @Test
  void aKeyOfAnotherLengthIsNoIdentityKey() {
    assertThrows(IllegalArgumentException.class, () -> new PeerIdentities().prove(NODE, new byte[31]));
  }
}
