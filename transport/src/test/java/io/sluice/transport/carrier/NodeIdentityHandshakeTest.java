package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.SECRET;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static io.sluice.transport.TransportTestSupport.patternByte;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A node id is what the peer proves, not what it says: a peer that holds the shared secret but
 * claims another node's id (with its own key, or with the other node's key it cannot sign for)
 * is refused at the handshake, on either side, and READs nothing granted to that node; a relay
 * that swaps a public key on the way fails the handshake even when it holds the secret.
 */
class NodeIdentityHandshakeTest {
  private static final int SIZE = 4096;
  private static final long SEED = 17;
  private static final int SERVICE = 9;
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void closePeers() {
    peers.close();
  }

  private static ByteBuffer readRequest(RegisteredRegion region) {
    ByteBuffer b = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
    new Frames.ReadRequestFrame(region.descriptor().key(), 0, SIZE).encode(b);
    return b.flip();
  }

  private static void assertRefused(Optional<RawFrameSocket.Frame> answer, String expected)
      throws ProtocolException {
    assertTrue(answer.isPresent(), "the server closed without saying why");
    assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.get().errorCode());
    String message = Frames.ErrorFrame.decode(ByteBuffer.wrap(answer.get().payload())).message();
    assertTrue(message.contains(expected), "the refusal should say '" + expected + "': " + message);
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aPeerClaimingAnotherNodesIdIsRefusedAndReadsNothingGrantedToIt(boolean encrypted) throws Exception {
    int flags = encrypted ? Handshake.FLAG_ENCRYPT : 0;
    Transport owner = peers.open(encrypted, Map.of());
    NodeIdentity granted = NodeIdentity.generate();
    NodeIdentity liar = NodeIdentity.generate();
    try (RegisteredRegion region = owner.allocateFor(granted.nodeId(), SIZE)) {
      fillPattern(region, SEED);
      try (RawFrameSocket raw = new RawFrameSocket(owner.localAddress())) {
        // The granted node's id with the liar's own key: refused at HELLO.
        assertRefused(raw.authenticateClaiming(SECRET, liar, granted.nodeId(), liar.publicKey(), flags),
            String.format("client claims node id %016x", granted.nodeId()));
        raw.send(FrameType.READ_REQUEST, 1, readRequest(region));
        raw.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
      }
      try (RawFrameSocket raw = new RawFrameSocket(owner.localAddress())) {
        // The granted node's id and public key, but the liar cannot sign for that key.
        assertRefused(raw.authenticateClaiming(SECRET, liar, granted.nodeId(), granted.publicKey(), flags),
            "client's signature does not verify");
        raw.send(FrameType.READ_REQUEST, 2, readRequest(region));
        raw.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
      }
      try (RawFrameSocket raw = new RawFrameSocket(owner.localAddress())) {
        // The liar as itself is admitted (it holds the secret) and the region is unknown to it.
        assertEquals(FrameType.AUTH_OK, raw.authenticate(SECRET, liar, flags).orElseThrow().type());
        raw.send(FrameType.READ_REQUEST, 3, readRequest(region));
        assertEquals(ErrorCode.UNKNOWN_KEY, raw.expect(FrameType.ERROR).errorCode());
      }
      try (RawFrameSocket raw = new RawFrameSocket(owner.localAddress())) {
        // The raw client is sound: as the granted node it reads the region.
        assertEquals(FrameType.AUTH_OK, raw.authenticate(SECRET, granted, flags).orElseThrow().type());
        raw.send(FrameType.READ_REQUEST, 4, readRequest(region));
        byte[] data = raw.expect(FrameType.READ_RESPONSE).payload();
        assertEquals(SIZE, data.length);
        for (int i = 0; i < SIZE; i++) {
          assertEquals(patternByte(SEED, i), data[i], "byte " + i);
        }
      }
    }
  }

  @Test
  void aServerClaimingAnotherNodesIdIsRefusedByTheClient() throws Exception {
    Transport client = peers.open(false, Map.of());
    NodeIdentity claimed = NodeIdentity.generate();
    NodeIdentity liar = NodeIdentity.generate();
    try (ScriptedServer server = ScriptedServer.raw(
        peer -> peer.acceptHandshakeClaiming(SECRET, liar, claimed.nodeId(), liar.publicKey()))) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(server.address()));
      assertTrue(e.getMessage().contains(String.format("server claims node id %016x", claimed.nodeId())),
          e.getMessage());
    }
    try (ScriptedServer server = ScriptedServer.raw(
        peer -> peer.acceptHandshakeClaiming(SECRET, liar, claimed.nodeId(), claimed.publicKey()))) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(server.address()));
      assertTrue(e.getMessage().contains("server's signature does not verify"), e.getMessage());
    }
    try (ScriptedServer server = ScriptedServer.raw(peer -> peer.acceptHandshake(SECRET, liar))) {
      try (Connection c = await(client.connect(server.address()))) {
        assertEquals(liar.nodeId(), c.peerNode(), "an honest scripted server is accepted as the node it proves");
      }
    }
  }

  /**
   * On a bare carrier: a refused liar reaches neither the message handler nor a control service
   * and leaves no session behind; an honest peer's control request is served with the node id it
   * proved.
   */
  @Test
  void aRefusedLiarLeavesNothingBehind() throws Exception {
    Map<String, String> config = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    config.put(TransportOption.SHM_ENABLED.key(), "false");
    AtomicInteger handled = new AtomicInteger();
    AtomicLong servedPeer = new AtomicLong();
    MessageHandler counting = (peer, m) -> {
      handled.incrementAndGet();
      return CompletableFuture.completedFuture(ByteBuffer.allocate(0));
    };
    ControlService service = (peer, address, request) -> {
      servedPeer.set(peer);
      return ByteBuffer.allocate(1);
    };
    NodeIdentity granted = NodeIdentity.generate();
    NodeIdentity liar = NodeIdentity.generate();
    try (Carrier carrier = new Carrier(Settings.from(TransportConfig.of(config)), NodeIdentity.generate(), counting,
        ControlServices.of(SERVICE, service), Optional.empty())) {
      for (byte[] key : List.of(liar.publicKey(), granted.publicKey())) {
        try (RawFrameSocket raw = new RawFrameSocket(carrier.localAddress())) {
          Optional<RawFrameSocket.Frame> answer = raw.authenticateClaiming(SECRET, liar, granted.nodeId(), key, 0);
          assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.orElseThrow().errorCode());
          raw.send(FrameType.REQUEST, 1, ByteBuffer.allocate(4));
          raw.send(FrameType.CONTROL, 2, new Frames.Control(SERVICE, ByteBuffer.allocate(1)).encode());
          raw.expectClosedWithout(FrameType.RESPONSE, FrameType.CONTROL_REPLY, FrameType.AUTH_OK);
        }
      }
      TransportTestSupport.eventually("the refused sessions are gone", TransportTestSupport.DEADLINE,
          () -> carrier.sessionCount() == 0 && carrier.unauthenticatedCount() == 0);
      assertEquals(0, handled.get(), "a refused peer's request reached the handler");
      assertEquals(0, servedPeer.get(), "a refused peer's control request was served");
      try (RawFrameSocket raw = new RawFrameSocket(carrier.localAddress())) {
        assertEquals(FrameType.AUTH_OK, raw.authenticate(SECRET, granted).orElseThrow().type());
        raw.send(FrameType.CONTROL, 3, new Frames.Control(SERVICE, ByteBuffer.allocate(1)).encode());
        raw.expect(FrameType.CONTROL_REPLY);
        assertEquals(granted.nodeId(), servedPeer.get(), "the service is told the node id the peer proved");
      }
    }
  }

  private static byte[] frame(FrameType type, ByteBuffer payload) {
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + payload.remaining());
    new FrameHeader(type, payload.remaining(), 0).encode(b);
    return b.put(payload).array();
  }

  private static ByteBuffer payloadOf(byte[] wholeFrame) {
    return ByteBuffer.wrap(wholeFrame, FrameHeader.LENGTH, wholeFrame.length - FrameHeader.LENGTH).slice();
  }

  /**
   * A relay swaps the client's identity key and node id in HELLO for another node's (a consistent
   * pair, so the claim itself checks out) and leaves the ephemeral keys alone. The server's
   * transcript is no longer the client's, so the client's finished value fails; holding the secret
   * would not help the relay recompute it, since it also needs dh, that is an ephemeral private
   * key. (A relay that holds the secret and brings its own ephemeral keys:
   * {@link HandshakeSecurityTest}.) The server admits no one and sends no AUTH_OK.
   */
  @Test
  void aRelayThatSwapsTheClientsKeyFailsTheHandshake() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport client = peers.open(false, Map.of());
    NodeIdentity swappedIn = NodeIdentity.generate();
    TamperingRelay.Tamper tamper = (d, h, f) -> {
      if (h.type() != FrameType.HELLO) {
        return List.of(f);
      }
      try {
        Frames.Hello hello = Frames.Hello.decode(payloadOf(f));
        return List.of(frame(FrameType.HELLO, new Frames.Hello(hello.version(), swappedIn.nodeId(), hello.flags(),
            hello.nonce(), hello.ephemeralKey(), swappedIn.publicKey()).encode()));
      } catch (ProtocolException e) {
        throw new AssertionError("the relay cannot parse HELLO", e);
      }
    };
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), tamper)) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(relay.address()));
      assertTrue(e.getMessage().contains("authentication failed"), e.getMessage());
      assertTrue(relay.framesFromServer().stream().noneMatch(f -> f.type() == FrameType.AUTH_OK),
          "the server admitted the relayed client");
    }
  }
}
