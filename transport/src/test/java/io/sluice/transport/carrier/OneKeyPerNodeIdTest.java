package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.metrics.TransportMetrics;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Within one transport a node id names one identity key while a connection or a region's reader
 * or grant holds it: a peer proving another key with that id is refused at the handshake, on
 * either side, so that every check that compares node ids compares keys. A second key with a real
 * node's id takes a search of about 2^64 keys; the tests put the id in the carrier's {@link
 * PeerIdentities} for another key instead, as the handshake of such a key would have.
 */
@Timeout(60)
class OneKeyPerNodeIdTest {
  private static final int SIZE = 64;
  private final EchoPeers echo = new EchoPeers();

  @AfterEach
  void closePeers() {
    echo.close();
  }

  private static Settings settings() {
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    return Settings.from(TransportConfig.of(m));
  }

  /** READs served from {@code table} to the node the session proved, as the tcp provider serves them. */
  private static ReadService readsOf(RegionTable table) {
    return (peer, key, offset, length) -> {
      Region r = table.acquire(key, peer);
      ByteBuffer data = r.buffer();
      data.limit((int) (offset + length)).position((int) offset);
      return new ReadService.Bytes(data, r::release);
    };
  }

  @Test
  void aGrantForOneKeyIsNotReadByAnotherKeyWithTheSameNodeId() throws Exception {
    NodeIdentity reader = NodeIdentity.generate();
    byte[] granted = NodeIdentity.generate().publicKey(); // stands for the key that first proved reader's id
    PeerIdentities peers = new PeerIdentities();
    RegionTable table = new RegionTable();
    try (Carrier owner = new Carrier(settings(), NodeIdentity.generate(), peers, MessageHandler.REJECT_ALL,
            ControlServices.none(), Optional.of(readsOf(table)), new TransportMetrics());
        Carrier client = new Carrier(settings(), reader, MessageHandler.REJECT_ALL, ControlServices.none(),
            Optional.empty())) {
      long key = table.newKey();
      Region region = new Region(new RemoteDescriptor(owner.nodeId(), 0, SIZE, key), Transport.GRANTED_ONLY,
          ByteBuffer.allocateDirect(SIZE), null, () -> table.revoke(key), () -> { }, peers);
      table.add(region);
      // A session proved (reader's id, granted) and was granted the region; then it ended.
      PeerIdentities.Hold session = peers.prove(reader.nodeId(), granted);
      ReaderGrant grant = region.allowReader(reader.nodeId());
      session.close();

      AuthenticationFailedException refused =
          assertFailsWith(AuthenticationFailedException.class, client.connect(owner.localAddress()));
      assertTrue(refused.getMessage().contains("another identity key"), refused.getMessage());
      TransportTestSupport.eventually("the refused session is gone", TransportTestSupport.DEADLINE,
          () -> owner.sessionCount() == 0);

      // Once the grant is closed the id names no key: the reader connects, and READs nothing
      // until it is granted the region itself.
      grant.close();
      assertEquals(1, peers.size(), "only the owner's own id is held");
      region.buffer().put(0, (byte) 7);
      Region into = new Region(new RemoteDescriptor(reader.nodeId(), 0, SIZE, 1), Transport.GRANTED_ONLY,
          ByteBuffer.allocateDirect(SIZE), null, () -> { }, () -> { }, new PeerIdentities());
      try (CarrierConnection c = await(client.connect(owner.localAddress()))) {
        assertFailsWith(UnknownKeyException.class, c.read(region.descriptor(), 0, into, 0, SIZE));
        try (ReaderGrant own = region.allowReader(reader.nodeId())) {
          await(c.read(region.descriptor(), 0, into, 0, SIZE));
          assertEquals(7, into.buffer().get(0));
        }
      } finally {
        into.close();
      }
      region.close();
    }
  }

  @Test
  void aClientRefusesAServerWhoseNodeIdItHoldsForAnotherKey() throws Exception {
    NodeIdentity server = NodeIdentity.generate();
    PeerIdentities peers = new PeerIdentities();
    try (Carrier owner = new Carrier(settings(), server, MessageHandler.REJECT_ALL, ControlServices.none(),
            Optional.empty());
        Carrier client = new Carrier(settings(), NodeIdentity.generate(), peers, MessageHandler.REJECT_ALL,
            ControlServices.none(), Optional.empty(), new TransportMetrics())) {
      try (PeerIdentities.Hold other = peers.prove(server.nodeId(), NodeIdentity.generate().publicKey())) {
        AuthenticationFailedException refused =
            assertFailsWith(AuthenticationFailedException.class, client.connect(owner.localAddress()));
        assertTrue(refused.getMessage().contains("another identity key"), refused.getMessage());
      }
      try (CarrierConnection c = await(client.connect(owner.localAddress()))) {
        assertArrayEquals(server.publicKey(), c.peerIdentityKey());
        assertArrayEquals(server.publicKey(), peers.keyOf(server.nodeId()).orElseThrow());
      }
      assertTrue(peers.keyOf(server.nodeId()).isEmpty(), "the closed connection no longer holds the server's id");
    }
  }

  @Test
  void eachSideKnowsTheOthersKeyWhileConnectedAndForgetsItAfter() throws Exception {
    Transport a = echo.open(false, Map.of());
    Transport b = echo.open(false, Map.of());
    try (Connection c = await(a.connect(b.localAddress()))) {
      assertArrayEquals(b.identityKey(), c.peerIdentityKey());
      assertEquals(NodeIdentity.derivedNodeId(c.peerIdentityKey()), c.peerNode());
      assertArrayEquals(b.identityKey(), a.peerIdentityKey(b.nodeId()).orElseThrow());
      TransportTestSupport.eventually("the accepting side knows the client's key", TransportTestSupport.DEADLINE,
          () -> b.peerIdentityKey(a.nodeId()).isPresent());
      assertArrayEquals(a.identityKey(), b.peerIdentityKey(a.nodeId()).orElseThrow());
    }
    assertTrue(a.peerIdentityKey(b.nodeId()).isEmpty());
    TransportTestSupport.eventually("the accepting side forgets the client's key", TransportTestSupport.DEADLINE,
        () -> b.peerIdentityKey(a.nodeId()).isEmpty());
  }
}
