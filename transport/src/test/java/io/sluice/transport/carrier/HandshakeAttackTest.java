package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.SECRET;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.bytesOf;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.SecretKeys;
import io.sluice.transport.Transport;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.X25519;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.RecordLayer;
import io.sluice.transport.wire.ScriptedServer;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Attacks on protocol 7 beyond {@link HandshakeSecurityTest}: parties without the secret, with
 * the secret and a node key of their own, with a client's key; reflection, downgrade by flags,
 * unknown-key share, malformed keys, guessing the secret, and altering mac mode's READ bodies.
 * Each test states what holds; the ones that show a limit say so in their name.
 */
class HandshakeAttackTest {
  private static final int SIZE = 4096;
  private static final String OTHER_SECRET = "not-the-contract-secret";
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void closePeers() {
    peers.close();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  // ---- 1. a relay without the secret ----

  /** A relay that terminates both sides with another secret completes neither. */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aRelayWithoutTheSecretCompletesNeitherSide(boolean encrypted) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    Transport client = peers.open(encrypted, Map.of());
    NodeIdentity relayKey = NodeIdentity.generate();
    try (RawFrameSocket toServer = new RawFrameSocket(server.localAddress())) {
      Optional<RawFrameSocket.Frame> last = toServer.authenticate(OTHER_SECRET, relayKey, EchoPeers.flags(encrypted));
      assertEquals(ErrorCode.AUTHENTICATION_FAILED, last.orElseThrow().errorCode());
      assertEquals("authentication failed", last.get().errorMessage(), "the refusal says nothing about the secret");
      toServer.expectClosedWithout(FrameType.AUTH_OK);
    }
    try (ScriptedServer fake = ScriptedServer.raw(peer -> {
      peer.acceptHandshake(OTHER_SECRET, relayKey);
      peer.expectClosedWithout(FrameType.READ_REQUEST, FrameType.REQUEST, FrameType.CONTROL);
    })) {
      Throwable e = failureOf(client.connect(fake.address()));
      assertTrue(e instanceof ProtocolException || e instanceof AuthenticationFailedException, String.valueOf(e));
      await(fake.finished());
    }
  }

  // ---- 2. a relay with the secret and a node key of its own ----

  /**
   * A relay holding the secret answers the client with its own, freshly made node key: the
   * handshake succeeds and {@code peerNode()} names the relay (it cannot claim X's id). A READ
   * of X's descriptor on that connection must then be refused without a READ_REQUEST being sent,
   * in either mode. Today it goes through and returns whatever the relay sends (the relay's bytes
   * land in the destination); only applications that compare {@code peerNode()} with the
   * descriptor's node (Flight's Negotiator, hadoop-rpc) notice.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void aReadOfAnotherNodesDescriptorIsRefused(boolean encrypted) throws Exception {
    Transport x = peers.open(encrypted, Map.of());
    Transport client = peers.open(encrypted, Map.of());
    byte[] forged = new byte[SIZE];
    Arrays.fill(forged, (byte) 0x66);
    AtomicReference<Boolean> asked = new AtomicReference<>(false);
    try (RegisteredRegion region = x.allocate(SIZE); RegisteredRegion dst = client.allocate(SIZE);
         ScriptedServer relay = ScriptedServer.authenticated(peer -> {
           Optional<RawFrameSocket.Frame> read = peer.next();
           if (read.isPresent() && read.get().type() == FrameType.READ_REQUEST) {
             asked.set(true);
             peer.send(FrameType.READ_RESPONSE, read.get().header().correlationId(), ByteBuffer.wrap(forged));
             peer.expectClosedWithout();
           }
         })) {
      fillPattern(region, 7);
      try (Connection c = await(client.connect(relay.address()))) {
        assertNotEquals(x.nodeId(), c.peerNode(), "the relay cannot claim X's node id");
        assertEquals(ScriptedServer.NODE, c.peerNode());
        failureOf(c.read(region.descriptor(), 0, dst, 0, SIZE));
        assertFalse(asked.get(), "a READ of node X's descriptor was sent to node " + Long.toHexString(c.peerNode()));
        assertFalse(Arrays.equals(forged, bytesOf(dst, 0, SIZE)), "the relay's bytes reached the destination");
      }
    }
  }

  // ---- 3. key-compromise impersonation ----

  /**
   * An attacker holding the client's Ed25519 private key, with or without the secret, claims
   * the real server's node and key and signs AUTH_OK with the client's key: refused (without
   * the secret at the record tag, with it at the signature).
   */
  @ParameterizedTest(name = "withSecret={0}")
  @ValueSource(booleans = {false, true})
  void theClientsOwnKeyDoesNotImpersonateAServerToIt(boolean withSecret) throws Exception {
    NodeIdentity clientKey = NodeIdentity.generate();
    NodeIdentity realServer = NodeIdentity.generate();
    Handshake client = new Handshake(SECRET);
    try (ScriptedServer fake = ScriptedServer.raw(peer -> {
      peer.acceptHandshakeClaiming(withSecret ? SECRET : OTHER_SECRET, clientKey, realServer.nodeId(),
          realServer.publicKey());
      peer.expectClosedWithout(FrameType.READ_REQUEST, FrameType.REQUEST);
    });
         java.nio.channels.SocketChannel ch = java.nio.channels.SocketChannel.open(
             new java.net.InetSocketAddress(fake.address().host(), fake.address().port()))) {
      FrameChannel channel = new FrameChannel(ch, 5_000_000_000L);
      Exception e = assertThrows(Exception.class, () -> ClientHandshake.authenticate(channel, client, clientKey, 0,
          io.sluice.transport.crypto.AesGcmEngine.JDK));
      if (withSecret) {
        assertTrue(e instanceof AuthenticationFailedException
            && e.getMessage().contains("server's signature does not verify"), String.valueOf(e));
      } else {
        assertTrue(e instanceof ProtocolException, String.valueOf(e));
      }
    }
  }

  // ---- 4. reflection ----

  /** A fake server that sends the client's own HELLO back as CHALLENGE gets no usable AUTH_OK out of it. */
  @Test
  void aHelloReflectedAsTheChallengeFailsTheConnect() throws Exception {
    Transport client = peers.open(false, Map.of());
    AtomicReference<byte[]> sawAuth = new AtomicReference<>();
    try (ScriptedServer fake = ScriptedServer.raw(peer -> {
      byte[] hello = peer.expect(FrameType.HELLO).payload();
      peer.send(FrameType.CHALLENGE, 0, ByteBuffer.wrap(hello));
      Optional<RawFrameSocket.Frame> auth = peer.next();
      auth.ifPresent(a -> sawAuth.set(a.payload()));
      if (auth.isPresent()) {
        // Its only signature is under the client label: send it back as the server's, bare.
        byte[] sig = Arrays.copyOfRange(auth.get().payload(), 32, 96);
        byte[] header = new byte[FrameHeader.LENGTH];
        new FrameHeader(FrameType.AUTH_OK, sig.length, 0).toBuffer().get(header);
        peer.sendRaw(concat(concat(header, new byte[RecordLayer.TAG_LENGTH]), sig));
      }
      peer.expectClosedWithout(FrameType.READ_REQUEST, FrameType.REQUEST);
    })) {
      Throwable e = failureOf(client.connect(fake.address()));
      assertTrue(e instanceof ProtocolException || e instanceof AuthenticationFailedException, String.valueOf(e));
      await(fake.finished());
    }
  }

  /** A transport that connects to itself authenticates itself: peerNode is its own id. */
  @Test
  void aTransportConnectedToItselfSeesItsOwnNodeId() throws Exception {
    Transport t = peers.open(false, Map.of());
    try (Connection c = await(t.connect(t.localAddress()))) {
      assertEquals(t.nodeId(), c.peerNode());
    }
  }

  // ---- 5. downgrade ----

  /** A HELLO of a later version, 8, is refused like those of earlier ones; no CHALLENGE. */
  @Test
  void aVersion8HelloIsRefused() throws Exception {
    Transport server = peers.open(false, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    ByteBuffer v8 = new Frames.Hello(8, self.nodeId(), 0, new byte[32], X25519.encode(BigInteger.valueOf(9)),
        self.publicKey()).encode();
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, v8);
      RawFrameSocket.Frame answer = raw.next().orElseThrow();
      assertEquals(ErrorCode.PROTOCOL, answer.errorCode());
      assertTrue(answer.errorMessage().contains("unsupported protocol version 8"), answer.errorMessage());
      raw.expectClosedWithout(FrameType.CHALLENGE);
    }
  }

  /** Unknown flag bits in HELLO are a protocol error. */
  @Test
  void unknownHelloFlagBitsAreRefused() throws Exception {
    Transport server = peers.open(false, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    byte[] hello = new byte[Frames.Hello.LENGTH];
    new Handshake(SECRET).client(self, 0).hello().get(hello);
    hello[10] = (byte) 0x80;
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, ByteBuffer.wrap(hello));
      assertEquals(ErrorCode.PROTOCOL, raw.next().orElseThrow().errorCode());
      raw.expectClosedWithout(FrameType.CHALLENGE);
    }
  }

  /**
   * A relay that flips the encryption flag in CHALLENGE (strips the server's request, or adds
   * one) or adds it to HELLO changes the transcript: the handshake fails, nothing is served.
   */
  @ParameterizedTest(name = "case={0}")
  @ValueSource(ints = {0, 1, 2})
  void flippedFlagsFailTheHandshake(int which) throws Exception {
    boolean serverEncrypts = which == 0;
    Transport server = peers.open(serverEncrypts, Map.of());
    Transport client = peers.open(false, Map.of());
    FrameType target = which == 2 ? FrameType.HELLO : FrameType.CHALLENGE;
    int flagAt = FrameHeader.LENGTH + 2 + 8;
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) -> {
      if (h.type() == target) {
        byte[] copy = f.clone();
        copy[flagAt] ^= Handshake.FLAG_ENCRYPT;
        return List.of(copy);
      }
      return List.of(f);
    })) {
      assertFailsWith(AuthenticationFailedException.class, client.connect(relay.address()));
      assertFalse(relay.framesFromServer().stream().anyMatch(h -> h.type() == FrameType.AUTH_OK));
    }
  }

  /** Either side asking suffices: READ bodies are ciphertext when only the server or only the client asks. */
  @ParameterizedTest(name = "serverAsks={0}")
  @ValueSource(booleans = {false, true})
  void encryptionTakesEffectWhenEitherSideAsks(boolean serverAsks) throws Exception {
    Transport server = peers.open(serverAsks, Map.of());
    Transport client = peers.open(!serverAsks, Map.of());
    List<byte[]> bodies = new ArrayList<>();
    try (RegisteredRegion src = server.allocate(SIZE); RegisteredRegion dst = client.allocate(SIZE);
         TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) -> {
           if (h.type() == FrameType.READ_RESPONSE) {
             synchronized (bodies) {
               bodies.add(f);
             }
           }
           return List.of(f);
         })) {
      fillPattern(src, 9);
      try (Connection c = await(client.connect(relay.address()))) {
        await(c.read(src.descriptor(), 0, dst, 0, SIZE));
      }
      byte[] plain = bytesOf(src, 0, SIZE);
      assertArrayEquals(plain, bytesOf(dst, 0, SIZE));
      synchronized (bodies) {
        assertEquals(1, bodies.size());
        byte[] wire = bodies.get(0);
        for (int i = 0; i + 64 <= wire.length; i++) {
          assertFalse(Arrays.equals(plain, 0, 64, wire, i, i + 64), "plain text on the wire at " + i);
        }
      }
    }
  }

  // ---- 6. unknown-key share ----

  /**
   * A relay C holding the secret rewrites A's HELLO to claim C's own node and key (keeping A's
   * ephemeral key, whose private half it lacks) and signs the server's transcript itself: the
   * server refuses at A's finished value, which covers A's transcript. So B never thinks it
   * talks to C while A thinks it talks to B.
   */
  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void anUnknownKeyShareRelayIsRefused(boolean encrypted) throws Exception {
    Transport b = peers.open(encrypted, Map.of());
    Transport a = peers.open(encrypted, Map.of());
    NodeIdentity c = NodeIdentity.generate();
    AtomicReference<String> refusal = new AtomicReference<>();
    try (ScriptedServer middle = ScriptedServer.raw(toA -> {
      try (RawFrameSocket toB = new RawFrameSocket(b.localAddress())) {
        Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(toA.expect(FrameType.HELLO).payload()));
        byte[] rewritten = new byte[Frames.Hello.LENGTH];
        new Frames.Hello(Frames.VERSION, c.nodeId(), h.flags(), h.nonce(), h.ephemeralKey(), c.publicKey()).encode()
            .get(rewritten);
        toB.send(FrameType.HELLO, 0, ByteBuffer.wrap(rewritten));
        byte[] challenge = toB.expect(FrameType.CHALLENGE).payload();
        toA.send(FrameType.CHALLENGE, 0, ByteBuffer.wrap(challenge));
        Frames.Auth authA = Frames.Auth.decode(ByteBuffer.wrap(toA.expect(FrameType.AUTH).payload()));
        byte[] thB = KeySchedule.transcriptHash(rewritten, challenge);
        toB.send(FrameType.AUTH, 0, new Frames.Auth(authA.finished(), c.sign(Handshake.CLIENT_SIGNATURE, thB)).encode());
        RawFrameSocket.Frame answer = toB.next().orElseThrow();
        refusal.set(answer.errorMessage());
        toA.send(answer.type(), 0, ByteBuffer.wrap(answer.payload()));
        toB.expectClosedWithout(FrameType.AUTH_OK);
      }
    })) {
      assertFailsWith(AuthenticationFailedException.class, a.connect(middle.address()));
      await(middle.finished());
      assertEquals("authentication failed", refusal.get());
    }
  }

  // ---- 7. malformed keys and frames ----

  private static final BigInteger P = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));

  /** Every point of small order on Curve25519 and its twist, canonical and not (u + p), as RFC 7748 bytes. */
  static List<byte[]> smallOrderPoints() {
    List<BigInteger> us = List.of(BigInteger.ZERO, BigInteger.ONE,
        new BigInteger("325606250916557431795983626356110631294008115727848805560023387167927233504"),
        new BigInteger("39382357235489614581723060781553021112529911719440698176882885853963445705823"),
        P.subtract(BigInteger.ONE), P, P.add(BigInteger.ONE));
    List<byte[]> out = new ArrayList<>();
    for (BigInteger u : us) {
      out.add(X25519.encode(u));
      if (u.compareTo(BigInteger.TWO.pow(255).subtract(P)) < 0) {
        out.add(X25519.encode(u.add(P))); // non-canonical, still below 2^255
      }
    }
    byte[] highBit = X25519.encode(BigInteger.ONE);
    highBit[31] |= (byte) 0x80; // u = 1 with the masked top bit set
    out.add(highBit);
    return out;
  }

  /** The server refuses every small-order ephemeral key, in any encoding, with an authentication failure. */
  @Test
  void everySmallOrderEphemeralKeyIsRefusedByTheServer() throws Exception {
    Transport server = peers.open(false, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    for (byte[] point : smallOrderPoints()) {
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send(FrameType.HELLO, 0, new Frames.Hello(Frames.VERSION, self.nodeId(), 0, new byte[32], point,
            self.publicKey()).encode());
        RawFrameSocket.Frame answer = raw.next().orElseThrow();
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.errorCode(), new BigInteger(1, reverse(point)).toString());
        raw.expectClosedWithout(FrameType.CHALLENGE);
      }
    }
    // The base point written as u = 9 + p is accepted as 9 (RFC 7748 reduces), and the server still works.
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, new Frames.Hello(Frames.VERSION, self.nodeId(), 0, new byte[32],
          X25519.encode(P.add(BigInteger.valueOf(9))), self.publicKey()).encode());
      assertEquals(FrameType.CHALLENGE, raw.next().orElseThrow().type());
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      assertEquals(FrameType.AUTH_OK, raw.authenticate(SECRET, self).orElseThrow().type());
    }
  }

  /** The client refuses every small-order ephemeral key in CHALLENGE without sending AUTH. */
  @Test
  void everySmallOrderEphemeralKeyIsRefusedByTheClient() throws Exception {
    Handshake hs = new Handshake(SECRET);
    NodeIdentity self = NodeIdentity.generate();
    for (byte[] point : smallOrderPoints()) {
      Handshake.Client client = hs.client(self, 0);
      ByteBuffer challenge = new Frames.Challenge(Frames.VERSION, ScriptedServer.NODE, 0, new byte[32], point,
          ScriptedServer.IDENTITY.publicKey()).encode();
      assertThrows(AuthenticationFailedException.class, () -> client.auth(challenge));
    }
  }

  private static byte[] reverse(byte[] b) {
    byte[] r = new byte[b.length];
    for (int i = 0; i < b.length; i++) {
      r[i] = b[b.length - 1 - i];
    }
    return r;
  }

  /** Ed25519 identity point: a signature (R = identity, S = 0) verifies for every message under this key. */
  private static final byte[] ED25519_IDENTITY = new byte[32];
  private static final byte[] UNIVERSAL_SIGNATURE = new byte[64];

  static {
    ED25519_IDENTITY[0] = 1;
    UNIVERSAL_SIGNATURE[0] = 1;
  }

  /**
   * A small-order Ed25519 identity key (here the neutral point) must be refused at HELLO. The JDK
   * accepts it as a public key, and the signature (R = neutral point, S = 0) verifies under it
   * for every message: whoever holds the secret claims its node id with no private key (today
   * the server answers such an AUTH with AUTH_OK). No honest node has that id, so nothing
   * granted to a real node is reachable, but "a node id proves a private key" does not hold for
   * the ids of the small-order keys.
   */
  @Test
  void aSmallOrderEd25519IdentityKeyIsRefused() throws Exception {
    assertTrue(NodeIdentity.verifies(ED25519_IDENTITY, Handshake.CLIENT_SIGNATURE, new byte[32], UNIVERSAL_SIGNATURE),
        "the JDK verifies the universal signature under the neutral point");
    Transport server = peers.open(false, Map.of());
    long node = NodeIdentity.derivedNodeId(ED25519_IDENTITY);
    Handshake.Client client = new Handshake(SECRET).client(NodeIdentity.generate(), node, ED25519_IDENTITY, 0);
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.HELLO, 0, client.hello());
      RawFrameSocket.Frame answer = raw.next().orElseThrow();
      if (answer.type() == FrameType.CHALLENGE) {
        Frames.Auth a = Frames.Auth.decode(client.auth(ByteBuffer.wrap(answer.payload())));
        raw.send(FrameType.AUTH, 0, new Frames.Auth(a.finished(), UNIVERSAL_SIGNATURE).encode());
        answer = raw.next().orElseThrow();
      }
      assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.errorCode(), "the server took a key-less node id");
      raw.expectClosedWithout(FrameType.AUTH_OK);
    }
  }

  /** Ed25519 keys that are not canonical (y >= p) are refused at HELLO; points off the curve never verify. */
  @Test
  void malformedEd25519IdentityKeysNeverVerify() throws Exception {
    Transport server = peers.open(false, Map.of());
    byte[] allOnes = new byte[32];
    Arrays.fill(allOnes, (byte) 0xff);
    byte[] notOnCurve = new byte[32];
    notOnCurve[0] = 2; // y = 2: (y^2 - 1)/(d y^2 + 1) is not a square
    for (byte[] key : List.of(allOnes, notOnCurve)) {
      Handshake.Client client = new Handshake(SECRET).client(NodeIdentity.generate(), NodeIdentity.derivedNodeId(key),
          key, 0);
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send(FrameType.HELLO, 0, client.hello());
        RawFrameSocket.Frame first = raw.next().orElseThrow();
        if (key == allOnes) {
          // y >= p is not a canonical encoding: refused at HELLO, before any key work.
          assertEquals(ErrorCode.AUTHENTICATION_FAILED, first.errorCode());
          assertTrue(first.errorMessage().contains("not a canonical Ed25519 key"), first.errorMessage());
          raw.expectClosedWithout(FrameType.CHALLENGE, FrameType.AUTH_OK);
          continue;
        }
        assertEquals(FrameType.CHALLENGE, first.type());
        ByteBuffer auth = client.auth(ByteBuffer.wrap(first.payload()));
        raw.send(FrameType.AUTH, 0, auth);
        RawFrameSocket.Frame answer = raw.next().orElseThrow();
        assertEquals(ErrorCode.AUTHENTICATION_FAILED, answer.errorCode());
        assertTrue(answer.errorMessage().contains("signature does not verify"), answer.errorMessage());
        raw.expectClosedWithout(FrameType.AUTH_OK);
      }
    }
  }

  /** Truncated, overlong and out-of-order handshake frames are protocol errors; none is answered with a CHALLENGE or AUTH_OK. */
  @Test
  void malformedAndUnexpectedHandshakeFramesAreRefused() throws Exception {
    Transport server = peers.open(false, Map.of());
    NodeIdentity self = NodeIdentity.generate();
    byte[] hello = new byte[Frames.Hello.LENGTH];
    new Handshake(SECRET).client(self, 0).hello().get(hello);
    List<List<Object>> cases = List.of(
        List.of(FrameType.HELLO, Arrays.copyOf(hello, hello.length - 1)),
        List.of(FrameType.HELLO, Arrays.copyOf(hello, hello.length + 1)),
        List.of(FrameType.AUTH, new byte[96]),
        List.of(FrameType.READ_REQUEST, new byte[20]),
        List.of(FrameType.AUTH_OK, new byte[64]),
        List.of(FrameType.CHALLENGE, hello));
    for (List<Object> c : cases) {
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send((FrameType) c.get(0), 0, ByteBuffer.wrap((byte[]) c.get(1)));
        RawFrameSocket.Frame answer = raw.next().orElseThrow();
        assertEquals(ErrorCode.PROTOCOL, answer.errorCode(), c.get(0) + " " + ((byte[]) c.get(1)).length);
        raw.expectClosedWithout(FrameType.CHALLENGE, FrameType.AUTH_OK);
      }
    }
    // A second HELLO, and a short AUTH, after a good HELLO.
    for (int variant = 0; variant < 2; variant++) {
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        raw.send(FrameType.HELLO, 0, ByteBuffer.wrap(hello));
        raw.expect(FrameType.CHALLENGE);
        raw.send(variant == 0 ? FrameType.HELLO : FrameType.AUTH, 0,
            ByteBuffer.wrap(variant == 0 ? hello : new byte[95]));
        RawFrameSocket.Frame answer = raw.next().orElseThrow();
        assertEquals(ErrorCode.PROTOCOL, answer.errorCode());
        raw.expectClosedWithout(FrameType.AUTH_OK);
      }
    }
  }

  // ---- 8. guessing the secret ----

  /**
   * An impostor server (no secret) learns the client's finished value and, since it chose its
   * own ephemeral key, knows dh and th: it can test guesses of the secret offline. Documented in
   * protocol.md; this is why secrets have at least 128 bits.
   */
  @Test
  void anImpostorServerCanTestGuessesOfTheSecretOffline() throws Exception {
    Transport client = peers.open(false, Map.of());
    Handshake impostor = new Handshake(OTHER_SECRET);
    AtomicReference<Handshake.Server> half = new AtomicReference<>();
    AtomicReference<byte[]> finished = new AtomicReference<>();
    AtomicReference<byte[]> helloBytes = new AtomicReference<>();
    try (ScriptedServer fake = ScriptedServer.raw(peer -> {
      byte[] hello = peer.expect(FrameType.HELLO).payload();
      helloBytes.set(hello);
      Handshake.Server s = impostor.server(ScriptedServer.IDENTITY, 0, Frames.Hello.decode(ByteBuffer.wrap(hello)));
      half.set(s);
      peer.send(FrameType.CHALLENGE, 0, s.challenge());
      finished.set(Frames.Auth.decode(ByteBuffer.wrap(peer.expect(FrameType.AUTH).payload())).finished());
    })) {
      failureOf(client.connect(fake.address()));
      await(fake.finished());
    }
    byte[] th = half.get().keys().transcriptHash();
    byte[] dh = half.get().keys().dh();
    String found = null;
    for (String guess : List.of("password-password", "sluice-cluster-secret", SECRET, "0123456789abcdef")) {
      KeySchedule k = KeySchedule.derive(SecretKeys.psk(guess), dh, th, false);
      if (Arrays.equals(k.clientFinished(), finished.get())) {
        found = guess;
      }
    }
    assertEquals(SECRET, found, "offline test of guesses against one recorded AUTH");
  }

  /**
   * A passive recording does not allow it: without an ephemeral private key, the right secret
   * with a wrong dh does not give the recorded finished value (dh is all the attacker lacks).
   */
  @Test
  void aPassiveRecordingGivesNothingToTestGuessesAgainst() throws Exception {
    Handshake hs = new Handshake(SECRET);
    Handshake.Client client = hs.client(NodeIdentity.generate(), 0);
    byte[] hello = new byte[Frames.Hello.LENGTH];
    client.hello().get(hello);
    Handshake.Server server = hs.server(ScriptedServer.IDENTITY, 0, Frames.Hello.decode(ByteBuffer.wrap(hello)));
    byte[] challenge = new byte[Frames.Challenge.LENGTH];
    server.challenge().get(challenge);
    byte[] recorded = Frames.Auth.decode(client.auth(ByteBuffer.wrap(challenge))).finished();
    byte[] th = KeySchedule.transcriptHash(hello, challenge);
    assertArrayEquals(th, server.keys().transcriptHash(), "th is public");
    // The passive attacker's best stand-in for dh: the public keys themselves, or zeros.
    Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(hello));
    for (byte[] fakeDh : List.of(new byte[32], h.ephemeralKey(), Frames.Challenge.decode(ByteBuffer.wrap(challenge))
        .ephemeralKey())) {
      assertFalse(Arrays.equals(recorded, KeySchedule.derive(SecretKeys.psk(SECRET), fakeDh, th, false)
          .clientFinished()));
    }
  }

  // ---- 9. dropped and reordered protected frames ----

  /**
   * A relay without keys drops the first of two REQUESTs, or swaps them: the sequence number in
   * the tag makes the server refuse the next frame it gets; neither request is answered.
   */
  @ParameterizedTest(name = "encrypted={0} swap={1}")
  @org.junit.jupiter.params.provider.CsvSource({"false,false", "false,true", "true,false", "true,true"})
  void droppedOrReorderedRequestsAreRefused(boolean encrypted, boolean swap) throws Exception {
    Transport server = peers.open(encrypted, Map.of());
    Transport client = peers.open(encrypted, Map.of());
    AtomicReference<byte[]> held = new AtomicReference<>();
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) -> {
      if (d == TamperingRelay.Direction.TO_SERVER && h.type() == FrameType.REQUEST) {
        if (held.get() == null) {
          held.set(f);
          return List.of();
        }
        return swap ? List.of(f, held.get()) : List.of(f);
      }
      return List.of(f);
    })) {
      try (Connection c = await(client.connect(relay.address()))) {
        // Sent in this order on one connection, so the relay sees them in it: no pause needed.
        var first = c.request(io.sluice.transport.TransportTestSupport.message("one"));
        var second = c.request(io.sluice.transport.TransportTestSupport.message("two"));
        assertTrue(failureOf(second) != null);
        assertTrue(failureOf(first) != null);
      }
      assertFalse(relay.framesFromServer().stream().anyMatch(h -> h.type() == FrameType.RESPONSE),
          "the server answered a dropped-around or reordered request");
    }
  }

  // ---- 9b. mac mode READ bodies ----

  /**
   * In mac mode a relay without any key alters a READ_RESPONSE's bytes, keeping even their CRC32C
   * unchanged without knowing them: CRC32C is affine, so adding any difference whose CRC-linear
   * part is zero (a chosen bit, plus 4 solved bytes) leaves the checksum as it was. The CRC32C
   * checks of Flight bodies and Spark blocks catch corruption, not such an attacker; the body's
   * GMAC, keyed with a key of the connection, does (protocol 6 left the body out of its tag, and
   * this READ succeeded with the altered bytes): the READ fails and the connection closes.
   */
  @Test
  void aRelayAlteringAMacModeReadBodyKeepingItsCrc32cFailsTheRead() throws Exception {
    Transport server = peers.open(false, Map.of());
    Transport client = peers.open(false, Map.of());
    byte[] delta = crcNeutralDelta(SIZE, 100, 2000);
    try (RegisteredRegion src = server.allocate(SIZE); RegisteredRegion dst = client.allocate(SIZE);
         TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) -> {
           if (h.type() != FrameType.READ_RESPONSE) {
             return List.of(f);
           }
           byte[] copy = f.clone();
           int body = copy.length - SIZE;
           for (int i = 0; i < SIZE; i++) {
             copy[body + i] ^= delta[i];
           }
           return List.of(copy);
         })) {
      fillPattern(src, 11);
      byte[] sent = bytesOf(src, 0, SIZE);
      byte[] altered = sent.clone();
      for (int i = 0; i < SIZE; i++) {
        altered[i] ^= delta[i];
      }
      assertFalse(Arrays.equals(sent, altered), "the relay alters the body");
      assertEquals(crc(sent), crc(altered), "and keeps its CRC32C");
      try (Connection c = await(client.connect(relay.address()))) {
        Throwable failure = failureOf(c.read(src.descriptor(), 0, dst, 0, SIZE));
        assertTrue(causedBy(failure, ProtocolException.class), "the READ failed with " + failure);
        io.sluice.transport.TransportTestSupport.eventually("the connection closes",
            io.sluice.transport.TransportTestSupport.DEADLINE, () -> !c.isOpen());
        assertTrue(((CarrierConnection) c).closeCause().orElseThrow() instanceof ProtocolException,
            "closed by " + ((CarrierConnection) c).closeCause());
      }
    }
  }

  private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
    for (Throwable x = t; x != null; x = x.getCause()) {
      if (type.isInstance(x)) {
        return true;
      }
    }
    return false;
  }

  private static long crc(byte[] b) {
    CRC32C c = new CRC32C();
    c.update(b);
    return c.getValue();
  }

  /**
   * A difference of {@code length} bytes with bit 0 of byte {@code flipAt} set and 4 bytes at
   * {@code fixAt} solved so that crc(x ^ delta) == crc(x) for every x of that length.
   */
  static byte[] crcNeutralDelta(int length, int flipAt, int fixAt) {
    long zero = crc(new byte[length]);
    // linear part of a difference: crc(d) ^ crc(0)
    long[] basis = new long[32];
    for (int bit = 0; bit < 32; bit++) {
      byte[] d = new byte[length];
      d[fixAt + bit / 8] = (byte) (1 << (bit % 8));
      basis[bit] = crc(d) ^ zero;
    }
    byte[] target = new byte[length];
    target[flipAt] = 1;
    long want = crc(target) ^ zero; // bits to cancel
    // Gaussian elimination over GF(2): find a subset of basis vectors xoring to want.
    long[] rows = basis.clone();
    int[] combo = new int[32];
    for (int i = 0; i < 32; i++) {
      combo[i] = 1 << i;
    }
    int rank = 0;
    int[] pivotCol = new int[32];
    for (int col = 31; col >= 0 && rank < 32; col--) {
      int sel = -1;
      for (int r = rank; r < 32; r++) {
        if ((rows[r] >>> col & 1) != 0) {
          sel = r;
          break;
        }
      }
      if (sel < 0) {
        continue;
      }
      long t = rows[sel];
      rows[sel] = rows[rank];
      rows[rank] = t;
      int tc = combo[sel];
      combo[sel] = combo[rank];
      combo[rank] = tc;
      for (int r = 0; r < 32; r++) {
        if (r != rank && (rows[r] >>> col & 1) != 0) {
          rows[r] ^= rows[rank];
          combo[r] ^= combo[rank];
        }
      }
      pivotCol[rank++] = col;
    }
    int use = 0;
    long rest = want;
    for (int r = 0; r < rank; r++) {
      if ((rest >>> pivotCol[r] & 1) != 0) {
        rest ^= rows[r];
        use ^= combo[r];
      }
    }
    if (rest != 0) {
      throw new IllegalStateException("no solution");
    }
    for (int bit = 0; bit < 32; bit++) {
      if ((use >>> bit & 1) != 0) {
        target[fixAt + bit / 8] ^= (byte) (1 << (bit % 8));
      }
    }
    return target;
  }

  // ---- 10. secrets ----

  @Test
  void secretsAreMeasuredInUtf8Bytes() {
    assertThrows(IllegalArgumentException.class, () -> new Handshake("0123456789abcde")); // 15 bytes
    new Handshake("0123456789abcdef"); // 16
    String eightTwoByteChars = "éééééééé"; // 8 characters, 16 bytes
    assertEquals(16, eightTwoByteChars.getBytes(StandardCharsets.UTF_8).length);
    new Handshake(eightTwoByteChars);
    assertThrows(IllegalArgumentException.class, () -> new Handshake("ééééééé")); // 14 bytes
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Handshake("sh0rt-s3cret"));
    assertFalse(e.getMessage().contains("sh0rt-s3cret"), "the refusal does not show the value");
  }

  /**
   * Unpaired surrogates encode as '?', so distinct secrets share one psk (16 lone surrogates are
   * the secret "????????????????"). A secret that does not round-trip through UTF-8 must be refused.
   */
  @Test
  void secretsWithUnpairedSurrogatesAreRefused() {
    String lone = "\uD800".repeat(16);
    assertArrayEquals("?".repeat(16).getBytes(StandardCharsets.UTF_8), lone.getBytes(StandardCharsets.UTF_8));
    assertTrue(SecretKeys.problem(lone).isPresent(), "a secret that UTF-8 cannot encode was accepted");
  }

  /** Neither the handshake's keys nor the settings print the secret or key bytes. */
  @Test
  void keysAndSettingsDoNotPrintTheSecret() throws Exception {
    Handshake.Client client = new Handshake(SECRET).client(NodeIdentity.generate(), 0);
    byte[] hello = new byte[Frames.Hello.LENGTH];
    client.hello().get(hello);
    Handshake.Server server = new Handshake(SECRET).server(ScriptedServer.IDENTITY, 0,
        Frames.Hello.decode(ByteBuffer.wrap(hello)));
    String keys = server.keys() + " " + server.keys().sessionKeys();
    assertFalse(keys.contains(java.util.HexFormat.of().formatHex(server.keys().clientToServerSecret())), keys);
    assertFalse(ScriptedServer.IDENTITY.toString().contains("PrivateKey"));
    Settings s = new Settings(SECRET, "127.0.0.1", "", 0, 1, 1, 1, 1, 1, 1, java.nio.file.Path.of("/tmp"), false, false,
        List.of(), 1, 1, 1, 1, 1, 1, false, "auto");
    assertFalse(s.toString().contains(SECRET), "Settings.toString() shows the secret: " + s);
  }
}
