package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.DEADLINE;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.awaitAllDone;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.failureIfAny;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.Transports;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameFuzzing;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.ScriptedClient;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The connecting side against a scripted server that breaks off mid-frame, sends oversized or
 * random frames, or stalls the handshake. Whatever the server does, every future of the client
 * completes within the deadline with a {@link TransportException}, and the client transport
 * stays usable for other peers.
 */
@Timeout(120)
class TcpClientFuzzTest {
  /** A descriptor of the scripted server; it never checks keys. */
  private static final RemoteDescriptor FAKE = new RemoteDescriptor(ScriptedServer.NODE, 0, 1 << 20, 77);

  private ScriptedClient fixture;
  private TransportHarness harness;
  private Transport client;
  private RegisteredRegion dst;

  @BeforeEach
  void start() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    fixture = ScriptedClient.open("tcp", Map.of(TransportOption.SHM_ENABLED.key(), "false"),
        Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "1000"));
    harness = fixture.harness();
    client = fixture.client();
    dst = fixture.dst();
  }

  @AfterEach
  void stop() {
    if (fixture != null) {
      fixture.close();
    }
  }

  /**
   * The server answers a request with a frame of {@code type} that announces {@code announced}
   * payload bytes, sends {@code sent} of them and dies: the request fails as the peer closing, and
   * the connection says it is gone.
   */
  private void assertCutAnswerFailsTheRequest(FrameType type, int announced, int sent) throws Exception {
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame req = peer.expect(FrameType.REQUEST);
      peer.sendRaw(truncatedFrame(type, announced, req.header().correlationId(), sent));
    })) {
      Connection c = await(client.connect(server.address()));
      assertFailsWith(PeerClosedException.class, c.request(message("question")));
      eventually("the connection reports the peer gone", DEADLINE, () -> !c.isOpen());
    }
  }

  @Test
  void serverDyingMidResponseFailsTheRequest() throws Exception {
    assertCutAnswerFailsTheRequest(FrameType.RESPONSE, 100, 10);
  }

  @Test
  void serverDyingMidErrorFrameFailsTheRequest() throws Exception {
    assertCutAnswerFailsTheRequest(FrameType.ERROR, 50, 5);
  }

  @Test
  void serverDyingMidReadResponseFailsTheRead() throws Exception {
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame req = peer.expect(FrameType.READ_REQUEST);
      Frames.ReadRequestFrame r = Frames.ReadRequestFrame.decode(ByteBuffer.wrap(req.payload()));
      peer.sendRaw(truncatedFrame(FrameType.READ_RESPONSE, r.length(), req.header().correlationId(), r.length() / 2));
    })) {
      Connection c = await(client.connect(server.address()));
      assertFailsWith(PeerClosedException.class, c.read(FAKE, 0, dst, 0, 100_000));
    }
  }

  @Test
  void oversizedResponseClosesTheConnectionAndFailsTheRequest() throws Exception {
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame req = peer.expect(FrameType.REQUEST);
      ByteBuffer h = ByteBuffer.allocate(FrameHeader.LENGTH);
      new FrameHeader(FrameType.RESPONSE, TransportTestSupport.MAX_MESSAGE_BYTES + 1, req.header().correlationId())
          .encode(h);
      peer.sendRaw(h.array());
      drainUntilClosed(peer);
    })) {
      Connection c = await(client.connect(server.address()));
      Throwable e = TransportTestSupport.failureOf(c.request(message("question")));
      assertTrue(e instanceof PeerClosedException || e instanceof ProtocolException,
          "oversized response: " + TransportTestSupport.describe(e));
      eventually("the connection is closed", DEADLINE, () -> !c.isOpen());
    }
  }

  @Test
  void readResponseForAnIdNothingWaitsOnClosesTheConnection() throws Exception {
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame req = peer.expect(FrameType.READ_REQUEST);
      peer.send(FrameType.READ_RESPONSE, req.header().correlationId() + 1000, ByteBuffer.allocate(16));
      drainUntilClosed(peer);
    })) {
      Connection c = await(client.connect(server.address()));
      Throwable e = TransportTestSupport.failureOf(c.read(FAKE, 0, dst, 0, 16));
      eventually("the connection is closed", DEADLINE, () -> !c.isOpen());
      Throwable cause = ((CarrierConnection) c).closeCause().orElseThrow();
      assertTrue(cause instanceof ProtocolException && cause.getMessage().contains("nothing waits on"),
          "closed by " + TransportTestSupport.describe(cause));
      assertTrue(e.getCause() instanceof ProtocolException || e instanceof ProtocolException,
          "the READ failed with " + TransportTestSupport.describe(e));
    }
  }

  @Test
  void messageAnswerToAReadFailsTheReadAndClosesTheConnection() throws Exception {
    for (FrameType answer : List.of(FrameType.RESPONSE, FrameType.CONTROL_REPLY)) {
      try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
        RawFrameSocket.Frame req = peer.expect(FrameType.READ_REQUEST);
        peer.send(answer, req.header().correlationId(), message("not the bytes"));
        drainUntilClosed(peer);
      })) {
        Connection c = await(client.connect(server.address()));
        Throwable e = TransportTestSupport.failureOf(c.read(FAKE, 0, dst, 0, 16));
        assertTrue(e instanceof ProtocolException || e.getCause() instanceof ProtocolException,
            answer + " to a READ: " + TransportTestSupport.describe(e));
        eventually("the connection is closed", DEADLINE, () -> !c.isOpen());
      }
    }
  }

  @Test
  void answerAfterTheDeadlineIsDroppedAndTheConnectionGoesOn() throws Exception {
    // The first request waits the deadline out; the handshake and the second request must never
    // come near it, with the scripted server's thread scheduled on a loaded machine.
    Transport impatient = harness.open(MessageHandler.REJECT_ALL, Map.of(TransportOption.IO_TIMEOUT_MS.key(), "2000"));
    CountDownLatch timedOut = new CountDownLatch(1);
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame first = peer.expect(FrameType.REQUEST);
      assertTrue(timedOut.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS), "the first request never timed out");
      peer.send(FrameType.RESPONSE, first.header().correlationId(), message("late"));
      RawFrameSocket.Frame second = peer.expect(FrameType.REQUEST);
      peer.send(FrameType.RESPONSE, second.header().correlationId(), message("on time"));
      drainUntilClosed(peer);
    })) {
      Connection c = await(impatient.connect(server.address()));
      assertFailsWith(TransportTimeoutException.class, c.request(message("first")));
      timedOut.countDown();
      CompletableFuture<ByteBuffer> second = c.request(message("second"));
      assertEquals("on time", text(await(second)));
      assertTrue(c.isOpen(), "the late answer closed the connection");
    }
  }

  /**
   * A READ's answer that comes after its deadline is read and checked as it passes (longer than the
   * read-ahead and the scratch it passes through), then dropped: the connection goes on when it
   * checks out, and closes as forged when a byte of its body was altered.
   */
  @ParameterizedTest(name = "altered={0}")
  @ValueSource(booleans = {false, true})
  void aLateReadAnswerIsCheckedAsItPassesAndDropped(boolean altered) throws Exception {
    Transport impatient = harness.open(MessageHandler.REJECT_ALL, Map.of(TransportOption.IO_TIMEOUT_MS.key(), "2000"));
    int length = 100_000;
    CountDownLatch timedOut = new CountDownLatch(1);
    try (RegisteredRegion late = impatient.allocate(length);
        ScriptedServer server = ScriptedServer.authenticated(peer -> {
          RawFrameSocket.Frame read = peer.expect(FrameType.READ_REQUEST);
          assertTrue(timedOut.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS), "the READ never timed out");
          byte[] answer = peer.encode(FrameType.READ_RESPONSE, read.header().correlationId(),
              ByteBuffer.wrap(TransportTestSupport.randomBytes(new Random(5), length)));
          if (altered) {
            answer[answer.length - 7] ^= 1;
          }
          peer.sendRaw(answer);
          if (!altered) {
            RawFrameSocket.Frame next = peer.expect(FrameType.REQUEST);
            peer.send(FrameType.RESPONSE, next.header().correlationId(), message("on time"));
          }
          drainUntilClosed(peer);
        })) {
      Connection c = await(impatient.connect(server.address()));
      assertFailsWith(TransportTimeoutException.class, c.read(FAKE, 0, late, 0, length));
      timedOut.countDown();
      if (altered) {
        eventually("the connection closes", DEADLINE, () -> !c.isOpen());
        Throwable cause = ((CarrierConnection) c).closeCause().orElseThrow();
        assertTrue(cause instanceof ProtocolException, "closed by " + TransportTestSupport.describe(cause));
      } else {
        assertEquals("on time", text(await(c.request(message("next")))));
        assertTrue(c.isOpen(), "the late answer closed the connection");
      }
    }
  }

  /**
   * An ERROR whose text is ill-formed UTF-8 fails the READ as its code says, with U+FFFD where the
   * bytes were ill formed, and leaves the connection as any ERROR under an operation's id does.
   */
  @Test
  void anErrorWithIllFormedTextIsReportedByItsCode() throws Exception {
    byte[] text = {'n', 'o', ' ', (byte) 0xC3, '(', ' ', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, 'k', 'e', 'y'};
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      RawFrameSocket.Frame read = peer.expect(FrameType.READ_REQUEST);
      peer.send(FrameType.ERROR, read.header().correlationId(), ByteBuffer.allocate(3 + text.length)
          .put(ErrorCode.UNKNOWN_KEY.id()).putShort((short) text.length).put(text).flip());
      RawFrameSocket.Frame next = peer.expect(FrameType.REQUEST);
      peer.send(FrameType.RESPONSE, next.header().correlationId(), message("still here"));
      drainUntilClosed(peer);
    })) {
      Connection c = await(client.connect(server.address()));
      UnknownKeyException e = assertFailsWith(UnknownKeyException.class, c.read(FAKE, 0, dst, 0, 16));
      assertTrue(e.getMessage().contains("no \uFFFD( \uFFFDkey"), e.getMessage());
      assertEquals("still here", text(await(c.request(message("next")))));
    }
  }

  @Test
  void handshakeThatStallsAfterTheChallengeTimesOut() throws Exception {
    try (ScriptedServer server = ScriptedServer.raw(peer -> {
      Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(peer.expect(FrameType.HELLO).payload()));
      peer.send(FrameType.CHALLENGE, 0,
          new Handshake(TransportTestSupport.SECRET).server(ScriptedServer.IDENTITY, 0, h).challenge());
      peer.expect(FrameType.AUTH);
      drainUntilClosed(peer); // never sends AUTH_OK
    })) {
      assertFailsWith(TransportTimeoutException.class, client.connect(server.address()));
    }
  }

  @Test
  void garbageInsteadOfAChallengeFailsTheConnect() throws Exception {
    byte[] garbage = TransportTestSupport.randomBytes(new Random(4), 64);
    garbage[0] = 0x00;
    try (ScriptedServer server = ScriptedServer.raw(peer -> {
      peer.expect(FrameType.HELLO);
      peer.sendRaw(garbage);
      drainUntilClosed(peer);
    })) {
      Throwable e = TransportTestSupport.failureOf(client.connect(server.address()));
      assertTrue(e instanceof TransportException, "garbage handshake: " + TransportTestSupport.describe(e));
    }
  }

  @Test
  void randomFramesFromTheServerNeverHangOrEscapeAsOtherExceptions() throws Exception {
    Random random = new Random(12);
    for (int i = 0; i < 30; i++) {
      long seed = random.nextLong();
      try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
        Random r = new Random(seed);
        peer.next(); // wait until the client has sent something
        int frames = 1 + r.nextInt(6);
        for (int f = 0; f < frames; f++) {
          peer.sendRaw(randomServerFrame(r));
        }
      })) {
        Connection c = await(client.connect(server.address()));
        List<CompletableFuture<?>> work = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
          work.add(c.request(message("q" + k)));
          work.add(c.read(FAKE, k * 1000L, dst, k * 1000L, 16));
        }
        awaitAllDone(work, DEADLINE);
        for (CompletableFuture<?> f : work) {
          Optional<Throwable> failure = failureIfAny(f);
          failure.ifPresent(e -> assertTrue(e instanceof TransportException,
              "iteration seed " + seed + ": " + TransportTestSupport.describe(e)));
        }
        c.close();
      }
    }
    // The client transport is unharmed: a real peer still works.
    Transport real = harness.open((peer, request) -> CompletableFuture.completedFuture(message("fine")));
    try (Connection c = TransportHarness.connect(client, real)) {
      assertEquals("fine", text(await(c.request(message("ok?")))));
    }
  }

  /** A header announcing {@code announced} payload bytes, followed by only {@code sent} of them. */
  private static byte[] truncatedFrame(FrameType type, int announced, long corr, int sent) {
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + sent);
    new FrameHeader(type, announced, corr).encode(b);
    return b.array();
  }

  private static byte[] randomServerFrame(Random r) {
    FrameType[] types = FrameType.values();
    FrameType type = types[r.nextInt(types.length)];
    int length = r.nextInt(6) == 0 ? r.nextInt(3000) : r.nextInt(40);
    ByteBuffer b = ByteBuffer.allocate(FrameHeader.LENGTH + length);
    new FrameHeader(type, length, r.nextInt(8)).encode(b);
    b.put(FrameFuzzing.randomBytes(r, length));
    return r.nextInt(5) == 0 ? FrameFuzzing.mutate(r, b.array()) : b.array();
  }

  private static void drainUntilClosed(RawFrameSocket peer) throws ProtocolException {
    while (peer.next().isPresent()) {
      // ignore what the client sends; wait for it to hang up
    }
  }
}
