package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.SECRET;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on protocol 7 over real sockets: a party in the middle that holds the secret but no
 * node's private key, replayed and reflected handshake messages, an old protocol version, and
 * ephemeral keys of small order. Each is refused, by the server or by the client, and never
 * reads or injects anything.
 */
class HandshakeSecurityTest {
  private static final int SIZE = 4096;
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

  /**
   * (a) A relay holding the secret sits in the middle with its own ephemeral keys: it runs the
   * client half towards the server (claiming the client's node and key) and the server half
   * towards the client (claiming the server's). It can compute every finished value, so the
   * server's refusal comes from the client's signature, which covers the transcript the client
   * saw, with the relay's ephemeral key in it. The server sends no AUTH_OK, and a READ the relay
   * seals with the keys it derived towards the server is never served.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aRelayHoldingTheSecretIsRefusedByTheServer(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    Transport client = peers.open(encrypted, Map.of());
    NodeIdentity relayKey = NodeIdentity.generate();
    Handshake relay = new Handshake(SECRET);
    AtomicReference<String> refusal = new AtomicReference<>();
    try (RegisteredRegion region = server.allocateFor(client.nodeId(), SIZE);
         ScriptedServer middle = ScriptedServer.raw(toClient -> {
           try (RawFrameSocket toServer = new RawFrameSocket(server.localAddress())) {
             Frames.Hello hello = Frames.Hello.decode(ByteBuffer.wrap(toClient.expect(FrameType.HELLO).payload()));
             Handshake.Client asClient = relay.client(relayKey, hello.node(), hello.identityKey(), hello.flags());
             toServer.send(FrameType.HELLO, 0, asClient.hello());
             ByteBuffer challenge = ByteBuffer.wrap(toServer.expect(FrameType.CHALLENGE).payload());
             Frames.Challenge c = Frames.Challenge.decode(challenge.duplicate());
             Frames.Auth ownAuth = Frames.Auth.decode(asClient.auth(challenge));
             Handshake.Server asServer = relay.server(relayKey, c.node(), c.identityKey(), c.flags(), hello);
             toClient.send(FrameType.CHALLENGE, 0, asServer.challenge());
             Frames.Auth clientAuth = Frames.Auth.decode(ByteBuffer.wrap(toClient.expect(FrameType.AUTH).payload()));
             asServer.checkFinished(clientAuth); // the relay holds the secret: the client's finished checks out
             toServer.send(FrameType.AUTH, 0, new Frames.Auth(ownAuth.finished(), clientAuth.signature()).encode());
             Optional<RawFrameSocket.Frame> answer = toServer.next();
             refusal.set(answer.isPresent() ? answer.get().errorMessage() : "closed");
             if (answer.isPresent()) {
               toClient.send(answer.get().type(), 0, ByteBuffer.wrap(answer.get().payload()));
             }
             toServer.protect(asClient.keys().sessionKeys(), true);
             toServer.send(FrameType.READ_REQUEST, 1, readRequest(region));
             toServer.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
           }
         })) {
      fillPattern(region, 3);
      assertFailsWith(AuthenticationFailedException.class, client.connect(middle.address()));
      await(middle.finished());
      assertTrue(refusal.get().contains("client's signature does not verify"), refusal.get());
    }
  }

  /**
   * (a) The same relay answers the client itself: it signs AUTH_OK with its own key, since it
   * cannot sign with the server's. The client refuses it, so it never sends the relay a request
   * as if to the server.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aRelayHoldingTheSecretIsRefusedByTheClient(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    Transport client = peers.open(encrypted, Map.of());
    NodeIdentity relayKey = NodeIdentity.generate();
    Handshake relay = new Handshake(SECRET);
    try (ScriptedServer middle = ScriptedServer.raw(toClient -> {
      try (RawFrameSocket toServer = new RawFrameSocket(server.localAddress())) {
        Frames.Hello hello = Frames.Hello.decode(ByteBuffer.wrap(toClient.expect(FrameType.HELLO).payload()));
        Handshake.Client asClient = relay.client(relayKey, hello.node(), hello.identityKey(), hello.flags());
        toServer.send(FrameType.HELLO, 0, asClient.hello());
        Frames.Challenge c = Frames.Challenge.decode(
            ByteBuffer.wrap(toServer.expect(FrameType.CHALLENGE).payload()));
        Handshake.Server asServer = relay.server(relayKey, c.node(), c.identityKey(), c.flags(), hello);
        toClient.send(FrameType.CHALLENGE, 0, asServer.challenge());
        Frames.Auth clientAuth = Frames.Auth.decode(ByteBuffer.wrap(toClient.expect(FrameType.AUTH).payload()));
        asServer.checkFinished(clientAuth);
        ByteBuffer forged = asServer.authOk(clientAuth); // the client's signature is sound; ours is the relay's
        toClient.protect(asServer.keys().sessionKeys(), false);
        toClient.send(FrameType.AUTH_OK, 0, forged);
        toClient.expectClosedWithout(FrameType.READ_REQUEST, FrameType.REQUEST);
      }
    })) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(middle.address()));
      assertTrue(e.getMessage().contains("server's signature does not verify"), e.getMessage());
      await(middle.finished());
    }
  }

  /**
   * (d) A recorded HELLO and AUTH of an honest client, replayed on a new connection: the server's
   * fresh ephemeral key makes another transcript and another dh, so the recorded finished value
   * fails and the server sends no AUTH_OK.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aReplayedHandshakeIsRefused(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    NodeIdentity honest = NodeIdentity.generate();
    Handshake.Client client = new Handshake(SECRET).client(honest, EchoPeers.flags(encrypted));
    ByteBuffer hello = client.hello();
    ByteBuffer auth;
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, hello.duplicate());
      auth = client.auth(ByteBuffer.wrap(raw.expect(FrameType.CHALLENGE).payload()));
      raw.send(FrameType.AUTH, 0, auth.duplicate());
      assertEquals(FrameType.AUTH_OK, raw.next().orElseThrow().type(), "the recorded handshake itself was sound");
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, hello.duplicate());
      raw.expect(FrameType.CHALLENGE);
      raw.send(FrameType.AUTH, 0, auth.duplicate());
      RawFrameSocket.Frame answer = raw.next().orElseThrow(() -> new AssertionError("closed without a reason"));
      assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.errorCode());
      raw.expectClosedWithout(FrameType.AUTH_OK);
    }
  }

  /**
   * (d) Reflection: the server's own CHALLENGE, the same layout as a HELLO, sent back to it as a
   * HELLO on a second connection, and that second CHALLENGE's values sent back as AUTH. Without the
   * first connection's ephemeral private key there is no finished value to send, and the server
   * only ever signs under its own label, so nothing it sent passes as a client's proof.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aReflectedChallengeIsRefused(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    try (RawFrameSocket first = new RawFrameSocket(server.localAddress());
         RawFrameSocket second = new RawFrameSocket(server.localAddress())) {
      first.send(FrameType.HELLO, 0, new Handshake(SECRET).client(NodeIdentity.generate(), EchoPeers.flags(encrypted)).hello());
      byte[] challenge = first.expect(FrameType.CHALLENGE).payload();
      second.send(FrameType.HELLO, 0, ByteBuffer.wrap(challenge));
      Frames.Challenge reflected = Frames.Challenge.decode(
          ByteBuffer.wrap(second.expect(FrameType.CHALLENGE).payload()));
      byte[] signature = new byte[NodeIdentity.SIGNATURE_LENGTH];
      System.arraycopy(reflected.nonce(), 0, signature, 0, 32);
      System.arraycopy(reflected.ephemeralKey(), 0, signature, 32, 32);
      second.send(FrameType.AUTH, 0, new Frames.Auth(reflected.ephemeralKey(), signature).encode());
      assertEquals(ErrorCode.AUTHENTICATION_FAILED, second.next().orElseThrow().errorCode());
      second.expectClosedWithout(FrameType.AUTH_OK);
    }
  }

  /** (e) A HELLO of protocol 5 (its layout, version 5) gets the clear refusal, and no CHALLENGE. */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aVersion5HelloIsRefused(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    ByteBuffer v5 = ByteBuffer.allocate(2 + 8 + 1 + 32 + 32).putShort((short) 5).putLong(self.nodeId())
        .put((byte) EchoPeers.flags(encrypted)).put(new byte[32]).put(self.publicKey()).flip();
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, v5);
      RawFrameSocket.Frame answer = raw.next().orElseThrow(() -> new AssertionError("closed without a reason"));
      assertEquals(ErrorCode.PROTOCOL, answer.errorCode());
      assertTrue(answer.errorMessage().contains("unsupported protocol version 5; this side speaks 7"), answer.errorMessage());
      raw.expectClosedWithout(FrameType.CHALLENGE, FrameType.AUTH_OK);
    }
  }

  /**
   * (e) A HELLO of protocol 6 (the layout of protocol 7, version 6) is refused with the text
   * docs/protocol.md gives, and no CHALLENGE: a version 6 peer learns why, and nothing is keyed
   * with version 6's labels.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aVersion6HelloIsRefused(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    Frames.Hello current = Frames.Hello.decode(
        new Handshake(SECRET).client(NodeIdentity.generate(), EchoPeers.flags(encrypted)).hello());
    ByteBuffer v6 = new Frames.Hello(6, current.node(), current.flags(), current.nonce(), current.ephemeralKey(),
        current.identityKey()).encode();
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, v6);
      RawFrameSocket.Frame answer = raw.next().orElseThrow(() -> new AssertionError("closed without a reason"));
      assertEquals(ErrorCode.PROTOCOL, answer.errorCode());
      assertEquals("unsupported protocol version 6; this side speaks 7", answer.errorMessage());
      raw.expectClosedWithout(FrameType.CHALLENGE, FrameType.AUTH_OK);
    }
  }

  /** (e) The client refuses a CHALLENGE of any other version: no negotiation, so no downgrade. */
  @ParameterizedTest(name = "version={0}")
  @ValueSource(ints = {5, 6, 8})
  void theClientRefusesAChallengeOfAnotherVersion(int version) throws Exception {
    Transport client = peers.open(false, Map.of());
    try (ScriptedServer server = ScriptedServer.raw(peer -> {
      Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(peer.expect(FrameType.HELLO).payload()));
      Frames.Challenge honest = Frames.Challenge.decode(
          new Handshake(SECRET).server(ScriptedServer.IDENTITY, 0, h).challenge());
      peer.send(FrameType.CHALLENGE, 0, new Frames.Challenge(version, honest.node(), honest.flags(), honest.nonce(),
          honest.ephemeralKey(), honest.identityKey()).encode());
      peer.expectClosedWithout(FrameType.AUTH);
    })) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(server.address()));
      assertTrue(e.getMessage().contains("server speaks protocol version " + version), e.getMessage());
      await(server.finished());
    }
  }

  /**
   * An ephemeral key of small order (u = 0 and u = 1 make every shared secret zero) is an
   * authentication failure on either side.
   */
  @ParameterizedTest(name = "u={0}")
  @ValueSource(ints = {0, 1})
  void anEphemeralKeyOfSmallOrderIsRefused(int u) throws Exception {
    Transport server = peers.open(false, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    byte[] lowOrder = new byte[32];
    lowOrder[0] = (byte) u;
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, new Frames.Hello(Frames.VERSION, self.nodeId(), 0, new byte[32], lowOrder,
          self.publicKey()).encode());
      RawFrameSocket.Frame answer = raw.next().orElseThrow(() -> new AssertionError("closed without a reason"));
      assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.errorCode());
      assertTrue(answer.errorMessage().contains("small order"), answer.errorMessage());
      raw.expectClosedWithout(FrameType.CHALLENGE, FrameType.AUTH_OK);
    }
    Transport client = peers.open(false, Map.of());
    try (ScriptedServer fake = ScriptedServer.raw(peer -> {
      Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(peer.expect(FrameType.HELLO).payload()));
      peer.send(FrameType.CHALLENGE, 0, new Frames.Challenge(Frames.VERSION, ScriptedServer.NODE, 0, h.nonce(),
          lowOrder, ScriptedServer.IDENTITY.publicKey()).encode());
      peer.expectClosedWithout(FrameType.AUTH);
    })) {
      AuthenticationFailedException e = assertFailsWith(AuthenticationFailedException.class,
          client.connect(fake.address()));
      assertTrue(e.getMessage().contains("small order"), e.getMessage());
    }
  }
}
