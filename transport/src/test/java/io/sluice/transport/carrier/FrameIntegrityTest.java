package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A man in the middle ({@link TamperingRelay}) alters, injects and replays frames after the
 * handshake, on plain (HMAC, and GMAC for READ bodies) and encrypted (AES-GCM) connections: the
 * side that receives the forged frame kills the connection with a {@link ProtocolException}, no
 * READ is served on a forged request, and no READ of an altered body completes; a READ that fails
 * once its bytes landed (forged, or cut by a closed or stalled connection) leaves zeros there.
 */
class FrameIntegrityTest {
  private static final int SIZE = 3 * RecordLayer.RECORD_LENGTH + 100;
  /** Where a protected frame's payload starts: after the header and the tag. */
  private static final int PAYLOAD = FrameHeader.LENGTH + RecordLayer.TAG_LENGTH;
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void closePeers() {
    peers.close();
  }

  private Transport open(boolean encrypted) throws Exception {
    return peers.open(encrypted, Map.of());
  }

  /** The connection died because a frame failed its check, and says so. */
  private static void assertDiedOfForgery(Connection c, CompletableFuture<?> op) {
    Throwable failure = failureOf(op);
    TransportTestSupport.eventually("connection closed", TransportTestSupport.DEADLINE, () -> !c.isOpen());
    Throwable cause = ((CarrierConnection) c).closeCause().orElseThrow();
    assertInstanceOf(ProtocolException.class, cause, "connection closed by " + cause);
    assertTrue(chainHas(failure, ProtocolException.class), "operation failed with " + failure);
  }

  private static boolean chainHas(Throwable t, Class<?> type) {
    for (Throwable x = t; x != null; x = x.getCause()) {
      if (type.isInstance(x)) {
        return true;
      }
    }
    return false;
  }

  private static long readResponses(TamperingRelay relay) {
    return relay.framesFromServer().stream().filter(h -> h.type() == FrameType.READ_RESPONSE).count();
  }

  /** What a test checks after a READ through an altering relay died of the forgery. */
  @FunctionalInterface
  private interface AfterForgery {
    void check(TamperingRelay relay, RegisteredRegion dst) throws Exception;
  }

  /** A test's part with a connection from a client through a relay to a server, both sides with a region. */
  @FunctionalInterface
  private interface Relayed {
    void run(RegisteredRegion src, RegisteredRegion dst, TamperingRelay relay, Connection c) throws Exception;
  }

  /** Opens a server and a client, a region of {@link #SIZE} on each, and a connection through a relay that applies {@code tamper}. */
  private void throughRelay(boolean encrypted, TamperingRelay.Tamper tamper, Relayed test) throws Exception {
    throughRelay(encrypted, Map.of(), tamper, test);
  }

  /** As above, the client opened with {@code clientOptions} on top. */
  private void throughRelay(boolean encrypted, Map<String, String> clientOptions, TamperingRelay.Tamper tamper,
      Relayed test) throws Exception {
    Transport server = open(encrypted);
    Transport client = peers.open(encrypted, clientOptions);
    try (RegisteredRegion src = server.allocate(SIZE); RegisteredRegion dst = client.allocate(SIZE);
        TamperingRelay relay = new TamperingRelay(server.localAddress(), tamper);
        Connection c = await(client.connect(relay.address()))) {
      test.run(src, dst, relay, c);
    }
  }

  /**
   * READs {@code length} bytes through a relay that flips one bit at {@code flipAt} of every
   * frame of type {@code altered}: the connection must die of the forgery; then {@code after}
   * checks what was (not) served or delivered.
   */
  private void readThroughAlteringRelay(boolean encrypted, FrameType altered, int flipAt, long seed, int length,
      AfterForgery after) throws Exception {
    throughRelay(encrypted, (d, h, f) -> h.type() == altered ? List.of(TamperingRelay.flipped(f, flipAt)) : List.of(f),
        (src, dst, relay, c) -> {
          fillPattern(src, seed);
          assertDiedOfForgery(c, c.read(src.descriptor(), 0, dst, 0, length));
          after.check(relay, dst);
        });
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void alteredReadRequestIsNotServed(boolean encrypted) throws Exception {
    readThroughAlteringRelay(encrypted, FrameType.READ_REQUEST, PAYLOAD + 15, 1, 1024, (relay, dst) -> {
      assertEquals(0, readResponses(relay), "a READ was served on an altered request");
      assertEquals(0, dst.buffer().getLong(0));
    });
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void injectedReadRequestIsNotServed(boolean encrypted) throws Exception {
    Transport server = open(encrypted);
    Transport client = open(encrypted);
    try (RegisteredRegion src = server.allocate(SIZE); RegisteredRegion dst = client.allocate(SIZE)) {
      fillPattern(src, 2);
      ByteBuffer forged = ByteBuffer.allocate(FrameHeader.LENGTH + Frames.ReadRequestFrame.LENGTH
          + RecordLayer.TAG_LENGTH);
      new FrameHeader(FrameType.READ_REQUEST, Frames.ReadRequestFrame.LENGTH, 777).encode(forged);
      forged.position(PAYLOAD); // the tag stays zeros: the relay does not hold the key
      new Frames.ReadRequestFrame(src.descriptor().key(), 0, 4096).encode(forged);
      byte[] injected = forged.array();
      try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) ->
              h.type() == FrameType.READ_REQUEST ? List.of(injected, f) : List.of(f));
          Connection c = await(client.connect(relay.address()))) {
        assertDiedOfForgery(c, c.read(src.descriptor(), 0, dst, 0, 1024));
        assertEquals(0, readResponses(relay), "a READ was served on an injected request");
      }
    }
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void replayedReadRequestIsNotServedTwice(boolean encrypted) throws Exception {
    AtomicBoolean replayed = new AtomicBoolean();
    throughRelay(encrypted, (d, h, f) ->
        h.type() == FrameType.READ_REQUEST && !replayed.getAndSet(true) ? List.of(f, f) : List.of(f),
        (src, dst, relay, c) -> {
          fillPattern(src, 3);
          CompletableFuture<Void> first = c.read(src.descriptor(), 0, dst, 0, 1024);
          TransportTestSupport.eventually("connection closed", TransportTestSupport.DEADLINE, () -> !c.isOpen());
          assertInstanceOf(ProtocolException.class, ((CarrierConnection) c).closeCause().orElseThrow());
          assertTrue(readResponses(relay) <= 1, "the replayed READ was served");
          if (!first.isCompletedExceptionally()) {
            assertPattern(3, 0, dst, 0, 1024);
          }
        });
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void alteredResponseKillsTheConnectionAtTheClient(boolean encrypted) throws Exception {
    Transport server = open(encrypted);
    Transport client = open(encrypted);
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) ->
            h.type() == FrameType.RESPONSE ? List.of(TamperingRelay.flipped(f, PAYLOAD + 1))
                : List.of(f));
        Connection c = await(client.connect(relay.address()))) {
      assertDiedOfForgery(c, c.request(message("hello")));
    }
  }

  @Test
  void alteredReadBodyOnAnEncryptedConnectionIsRejectedAndNotDelivered() throws Exception {
    readThroughAlteringRelay(true, FrameType.READ_RESPONSE, PAYLOAD + 100, 4, 4096, (relay, dst) ->
        assertArrayEquals(new byte[4096], TransportTestSupport.bytesOf(dst, 0, 4096),
            "forged plaintext reached the destination"));
  }

  /**
   * A READ body altered on the wire in mac mode, at its first byte, in its middle or at its last:
   * the READ fails and the connection closes (the body's GMAC), though its bytes landed.
   */
  @ParameterizedTest(name = "flip at {0}")
  @ValueSource(ints = {PAYLOAD, PAYLOAD + SIZE / 2, -1})
  void alteredReadBodyInMacModeFailsTheReadAndClosesTheConnection(int flipAt) throws Exception {
    readThroughAlteringRelay(false, FrameType.READ_RESPONSE, flipAt, 10, SIZE, (relay, dst) ->
        assertEquals(1, readResponses(relay), "one answer, refused by the client"));
  }

  /** Where a READ lands in the tests of what a failed one leaves: inside the region, its edges untouched. */
  private static final int LANDS_AT = 64;
  private static final int LANDS = SIZE - 2 * LANDS_AT;

  /**
   * After a READ of {@link #LANDS} bytes at {@link #LANDS_AT} failed, into a destination that held
   * the pattern of {@code dstSeed} (a reused buffer): its range holds zeros, not what arrived, and
   * the bytes around it are as they were.
   */
  private static void assertZeroedRange(RegisteredRegion dst, long dstSeed) {
    assertArrayEquals(new byte[LANDS], TransportTestSupport.bytesOf(dst, LANDS_AT, LANDS),
        "bytes of a failed READ stayed in its destination");
    assertPattern(dstSeed, 0, dst, 0, LANDS_AT);
    assertPattern(dstSeed, LANDS_AT + LANDS, dst, LANDS_AT + LANDS, LANDS_AT);
  }

  /**
   * In mac mode an altered body lands before its GMAC fails; the READ fails and what landed is
   * zeroed before it does, wherever the bit was flipped.
   */
  @ParameterizedTest(name = "flip at {0}")
  @ValueSource(ints = {PAYLOAD, PAYLOAD + LANDS / 2, -1})
  void alteredReadBodyInMacModeLeavesZerosInTheDestination(int flipAt) throws Exception {
    throughRelay(false, (d, h, f) -> h.type() == FrameType.READ_RESPONSE
        ? List.of(TamperingRelay.flipped(f, flipAt)) : List.of(f), (src, dst, relay, c) -> {
          fillPattern(src, 11);
          fillPattern(dst, 12);
          assertDiedOfForgery(c, c.read(src.descriptor(), 0, dst, LANDS_AT, LANDS));
          assertZeroedRange(dst, 12);
        });
  }

  /** An altered later record fails the READ after the records before it were opened into the destination: those go too. */
  @Test
  void alteredLaterRecordLeavesZerosWhereEarlierRecordsLanded() throws Exception {
    throughRelay(true, (d, h, f) -> h.type() == FrameType.READ_RESPONSE
        ? List.of(TamperingRelay.flipped(f, recordAt(2) + RecordLayer.TAG_LENGTH + 7)) : List.of(f),
        (src, dst, relay, c) -> {
          fillPattern(src, 13);
          fillPattern(dst, 14);
          assertDiedOfForgery(c, c.read(src.descriptor(), 0, dst, LANDS_AT, LANDS));
          assertZeroedRange(dst, 14);
        });
  }

  /** How the relay ends a READ body it forwarded half of. */
  enum Cut { CLOSED, STALLED }

  /**
   * The relay forwards a READ_RESPONSE up to the middle of its third record's worth of body, then
   * closes the connection or sends nothing more until the client's I/O deadline: the READ fails,
   * and the bytes that landed (plain in mac mode, two opened records when encrypted) are zeroed.
   */
  @ParameterizedTest(name = "{0}, encrypted={1}")
  @org.junit.jupiter.params.provider.CsvSource({"CLOSED, false", "CLOSED, true", "STALLED, false", "STALLED, true"})
  void readCutMidBodyLeavesZerosInTheDestination(Cut cut, boolean encrypted) throws Exception {
    int cutAt = encrypted ? recordAt(2) + RecordLayer.TAG_LENGTH + 100 : PAYLOAD + 2 * RecordLayer.RECORD_LENGTH + 100;
    Map<String, String> client = cut == Cut.STALLED
        ? Map.of(io.sluice.transport.TransportOption.IO_TIMEOUT_MS.key(), "1500") : Map.of();
    throughRelay(encrypted, client, (d, h, f) -> h.type() == FrameType.READ_RESPONSE
        ? List.of(Arrays.copyOf(f, cutAt)) : List.of(f), (src, dst, relay, c) -> {
          fillPattern(src, 15);
          fillPattern(dst, 16);
          CompletableFuture<Void> read = c.read(src.descriptor(), 0, dst, LANDS_AT, LANDS);
          TransportTestSupport.eventually("two records' worth landed", TransportTestSupport.DEADLINE,
              () -> TransportTestSupport.patternMismatch(15, 0, dst, LANDS_AT, 2 * RecordLayer.RECORD_LENGTH).isEmpty());
          if (cut == Cut.CLOSED) {
            relay.close();
          }
          failureOf(read);
          assertZeroedRange(dst, 16);
        });
  }

  /** Where record {@code i} (its tag, then its ciphertext) starts in a whole encrypted frame. */
  private static int recordAt(int i) {
    return FrameHeader.LENGTH + i * (RecordLayer.TAG_LENGTH + RecordLayer.RECORD_LENGTH);
  }

  @Test
  void largeEncryptedReadTravelsInBoundedRecords() throws Exception {
    List<Integer> wireLengths = new java.util.concurrent.CopyOnWriteArrayList<>();
    throughRelay(true, (d, h, f) -> {
      if (h.type() == FrameType.READ_RESPONSE) {
        wireLengths.add(f.length);
      }
      return List.of(f);
    }, (src, dst, relay, c) -> {
      fillPattern(src, 6);
      await(c.read(src.descriptor(), 0, dst, 0, SIZE));
      assertPattern(6, 0, dst, 0, SIZE);
    });
    assertEquals(List.of(FrameHeader.LENGTH + SIZE + 4 * RecordLayer.TAG_LENGTH), wireLengths,
        "a READ of three records and a bit travels as four records, each with its own tag");
  }

  @Test
  void alteredLaterRecordFailsTheReadAndItsBytesNeverArrive() throws Exception {
    readThroughAlteringRelay(true, FrameType.READ_RESPONSE, recordAt(2) + RecordLayer.TAG_LENGTH + 7, 7, SIZE,
        (relay, dst) -> assertArrayEquals(new byte[SIZE - 2 * RecordLayer.RECORD_LENGTH],
            TransportTestSupport.bytesOf(dst, 2 * RecordLayer.RECORD_LENGTH, SIZE - 2 * RecordLayer.RECORD_LENGTH),
            "bytes of the forged record or after it reached the destination"));
  }

  @Test
  void reorderedRecordsFailTheRead() throws Exception {
    int record = RecordLayer.TAG_LENGTH + RecordLayer.RECORD_LENGTH;
    throughRelay(true, (d, h, f) -> {
      if (h.type() != FrameType.READ_RESPONSE) {
        return List.of(f);
      }
      byte[] swapped = f.clone();
      System.arraycopy(f, recordAt(0), swapped, recordAt(1), record);
      System.arraycopy(f, recordAt(1), swapped, recordAt(0), record);
      return List.of(swapped);
    }, (src, dst, relay, c) -> {
      fillPattern(src, 8);
      assertDiedOfForgery(c, c.read(src.descriptor(), 0, dst, 0, SIZE));
      assertArrayEquals(new byte[SIZE], TransportTestSupport.bytesOf(dst, 0, SIZE),
          "plaintext of a record out of its place reached the destination");
    });
  }

  @ParameterizedTest(name = "encrypted={0}")
  @ValueSource(booleans = {false, true})
  void readBodiesAreCiphertextExactlyWhenEncrypted(boolean encrypted) throws Exception {
    AtomicInteger seen = new AtomicInteger();
    AtomicReference<byte[]> body = new AtomicReference<>(); // written by the relay's thread
    throughRelay(encrypted, (d, h, f) -> {
      if (h.type() == FrameType.READ_RESPONSE && seen.getAndIncrement() == 0) {
        body.set(Arrays.copyOfRange(f, PAYLOAD, PAYLOAD + h.payloadLength()));
      }
      return List.of(f);
    }, (src, dst, relay, c) -> {
      fillPattern(src, 5);
      await(c.read(src.descriptor(), 0, dst, 0, 4096));
      assertPattern(5, 0, dst, 0, 4096);
      byte[] plain = TransportTestSupport.bytesOf(src, 0, 4096);
      assertEquals(!encrypted, Arrays.equals(plain, body.get()), "READ body on the wire vs the region's bytes");
    });
  }

  @Test
  void strippedEncryptionFlagFailsAuthentication() throws Exception {
    Transport server = open(false);
    Transport client = open(true);
    int flagOffset = FrameHeader.LENGTH + 2 + 8;
    try (TamperingRelay relay = new TamperingRelay(server.localAddress(), (d, h, f) -> {
      if (h.type() == FrameType.HELLO) {
        byte[] copy = f.clone();
        copy[flagOffset] = 0;
        return List.of(copy);
      }
      return List.of(f);
    })) {
      assertFailsWith(AuthenticationFailedException.class, client.connect(relay.address()));
    }
    try (Connection c = await(client.connect(server.localAddress()))) {
      assertEquals("ok:both", text(await(c.request(message("both")))), "one side asking suffices");
    }
  }
}
