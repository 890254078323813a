package io.sluice.transport.wire;

import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.Transports;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.handshake.Handshake;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile peers on a live tcp listener, driven frame by frame: random frames before and after
 * authentication, READs before authentication, wrong and replayed proofs. Every such socket is
 * closed by the server, no registered byte leaves before authentication, and a good connection
 * opened beforehand keeps working throughout.
 */
@Timeout(120)
class WireFuzzTest {
  private static final long DATA_SEED = 99;

  private TransportHarness harness;
  private Transport server;
  private Transport client;
  private RegisteredRegion region;
  private Connection good;
  private final AtomicInteger handled = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    harness = new TransportHarness("tcp", Map.of(TransportOption.SHM_ENABLED.key(), "false"));
    MessageHandler echo = (peer, request) -> {
      handled.incrementAndGet();
      return CompletableFuture.completedFuture(message("echo:" + text(request)));
    };
    // Short deadlines: a frame that announces more payload than it sends stalls its socket
    // until the server gives up on it.
    server = harness.open(echo, Map.of(
        TransportOption.CONNECT_TIMEOUT_MS.key(), "1500", TransportOption.IO_TIMEOUT_MS.key(), "2000"));
    client = harness.open(MessageHandler.REJECT_ALL);
    region = server.allocate(64 * 1024);
    fillPattern(region, DATA_SEED);
    good = TransportHarness.connect(client, server);
  }

  @AfterEach
  void stop() {
    if (harness == null) {
      return;
    }
    try {
      if (good != null) {
        good.close();
      }
      if (region != null) {
        region.close();
      }
    } finally {
      harness.close();
    }
  }

  /** The good connection still reads and asks. */
  private void assertGoodConnectionWorks() throws Exception {
    assertTrue(good.isOpen(), "a hostile peer disturbed a good connection");
    try (RegisteredRegion dst = client.allocate(64 * 1024)) {
      await(good.read(region.descriptor(), 0, dst, 0, 64 * 1024));
      assertPattern(DATA_SEED, 0, dst, 0, 64 * 1024);
    }
    assertEquals("echo:ping", text(await(good.request(message("ping")))));
  }

  /** An honest, unencrypted HELLO from {@code self}. */
  private static ByteBuffer hello(NodeIdentity self) {
    return new Handshake(TransportTestSupport.SECRET).client(self, 0).hello();
  }

  private ByteBuffer readOfLiveRegion(long offset, int length) {
    ByteBuffer b = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
    new Frames.ReadRequestFrame(region.descriptor().key(), offset, length).encode(b);
    return b.flip();
  }

  @Test
  void readBeforeAuthenticationIsRefused() throws Exception {
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.READ_REQUEST, 1, readOfLiveRegion(0, 1024));
      raw.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      // A HELLO first, then a READ instead of the proof.
      raw.send(FrameType.HELLO, 0, hello(NodeIdentity.generate()));
      raw.send(FrameType.READ_REQUEST, 2, readOfLiveRegion(0, 1024));
      raw.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      raw.send(FrameType.REQUEST, 3, message("let me in"));
      raw.expectClosedWithout(FrameType.RESPONSE, FrameType.AUTH_OK);
    }
    assertEquals(0, handled.get(), "an unauthenticated request reached the handler");
    assertGoodConnectionWorks();
  }

  @Test
  void wrongProofIsRejectedByTheServer() throws Exception {
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      Optional<RawFrameSocket.Frame> answer = raw.authenticate("wrong-secret-of-16+bytes", NodeIdentity.generate());
      assertTrue(answer.isEmpty() || answer.get().type() == FrameType.ERROR,
          "server answered a wrong proof with " + answer.map(RawFrameSocket.Frame::type));
      answer.ifPresent(f -> assertErrorCode(f, ErrorCode.AUTHENTICATION_FAILED));
      raw.send(FrameType.READ_REQUEST, 9, readOfLiveRegion(0, 16));
      raw.expectClosedWithout(FrameType.READ_RESPONSE, FrameType.AUTH_OK);
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      // Echo the server's own values back as the finished value: only the secret and dh make it.
      NodeIdentity self = NodeIdentity.generate();
      raw.send(FrameType.HELLO, 0, hello(self));
      RawFrameSocket.Frame challenge = raw.next().orElseThrow(() -> new AssertionError("no CHALLENGE"));
      assertEquals(FrameType.CHALLENGE, challenge.type());
      Frames.Challenge c = Frames.Challenge.decode(ByteBuffer.wrap(challenge.payload()));
      raw.send(FrameType.AUTH, 0, new Frames.Auth(c.ephemeralKey(), new byte[NodeIdentity.SIGNATURE_LENGTH]).encode());
      raw.expectClosedWithout(FrameType.AUTH_OK);
    }
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      Optional<RawFrameSocket.Frame> ok = raw.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate());
      assertEquals(Optional.of(FrameType.AUTH_OK), ok.map(RawFrameSocket.Frame::type),
          "the raw client itself is sound: the right secret is accepted");
    }
    assertGoodConnectionWorks();
  }

  @Test
  void randomFramesBeforeAuthenticationCloseTheSocket() throws Exception {
    Random random = new Random(31);
    for (int i = 0; i < 40; i++) {
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        int frames = 1 + random.nextInt(4);
        for (int f = 0; f < frames && raw.sendRaw(randomFrame(random)); f++) {
          // keep sending until the server hangs up
        }
        raw.expectClosedWithout(FrameType.AUTH_OK, FrameType.READ_RESPONSE, FrameType.RESPONSE);
      }
    }
    assertEquals(0, handled.get(), "an unauthenticated request reached the handler");
    assertGoodConnectionWorks();
  }

  @Test
  void randomFramesAfterAuthenticationCloseTheSocket() throws Exception {
    Random random = new Random(32);
    for (int i = 0; i < 40; i++) {
      try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
        assertEquals(Optional.of(FrameType.AUTH_OK),
            raw.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate()).map(RawFrameSocket.Frame::type));
        int frames = 1 + random.nextInt(4);
        for (int f = 0; f < frames && raw.sendRaw(randomFrame(random)); f++) {
          // keep sending until the server hangs up
        }
        // End with a frame no server accepts, so every socket must end up closed.
        byte[] bad = new FrameHeader(FrameType.AUTH_OK, 0, 0).toBuffer().array();
        bad[0] = 0x00;
        raw.sendRaw(bad);
        raw.expectClosedWithout(FrameType.READ_RESPONSE);
      }
      if (i % 10 == 0) {
        assertGoodConnectionWorks();
      }
    }
    assertGoodConnectionWorks();
  }

  @Test
  void oversizedRequestFrameClosesTheSocket() throws Exception {
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      assertEquals(Optional.of(FrameType.AUTH_OK),
          raw.authenticate(TransportTestSupport.SECRET, NodeIdentity.generate()).map(RawFrameSocket.Frame::type));
      ByteBuffer header = ByteBuffer.allocate(FrameHeader.LENGTH);
      new FrameHeader(FrameType.REQUEST, TransportTestSupport.MAX_MESSAGE_BYTES + 1, 1).encode(header);
      raw.sendRaw(header.array());
      raw.expectClosedWithout(FrameType.RESPONSE);
    }
    assertEquals(0, handled.get(), "the oversized request reached the handler");
    assertGoodConnectionWorks();
  }

  /** A frame with a valid or nearly valid header and a random payload of plausible size. */
  private static byte[] randomFrame(Random random) {
    FrameType[] types = FrameType.values();
    FrameType type = types[random.nextInt(types.length)];
    int length = random.nextInt(8) == 0 ? random.nextInt(5000) : random.nextInt(64);
    byte[] payload = FrameFuzzing.randomBytes(random, length);
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + length);
    new FrameHeader(type, length, random.nextInt(100)).encode(b);
    b.put(payload);
    byte[] out = b.array();
    return random.nextInt(4) == 0 ? FrameFuzzing.mutate(random, out) : out;
  }

  private static void assertErrorCode(RawFrameSocket.Frame f, ErrorCode expected) {
    assertEquals(expected, f.errorCode());
  }
}
