package io.sluice.spark.shuffle.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Round trips and malformed input for the range protocol; no sockets. */
class RangeProtocolTest {
  private static final RemoteDescriptor REGION = new RemoteDescriptor(7, 0, 1000, 0x1234);
  private static final List<RemoteDescriptor> ONE = List.of(REGION);

  @Test
  void rangeRequestRoundTrip() {
    List<RangeProtocol.Query> queries =
        List.of(new RangeProtocol.Query(5, 0, 3), new RangeProtocol.Query(Long.MAX_VALUE, 2099, 2100));
    RangeProtocol.Request r = RangeProtocol.decodeRequest(RangeProtocol.encodeRequest(42, queries));
    assertEquals(42, r.shuffleId());
    assertEquals(queries, r.queries());
  }

  @Test
  void rangeResponseRoundTrip() {
    List<RangeProtocol.Query> queries = List.of(new RangeProtocol.Query(5, 1, 4), new RangeProtocol.Query(6, 0, 1));
    List<RangeProtocol.Answer> answers = List.of(
        new RangeProtocol.Answer(ONE, new long[] {10, 10, 300, 1000}),
        new RangeProtocol.Answer(ONE, new long[] {0, 0}));
    ByteBuffer encoded = RangeProtocol.encodeResponse(answers);
    assertEquals(RangeProtocol.responseBytes(queries), encoded.remaining());
    List<RangeProtocol.Answer> back = RangeProtocol.decodeResponse(encoded, queries);
    assertEquals(ONE, back.get(0).windows());
    assertArrayEquals(new long[] {10, 10, 300, 1000}, back.get(0).offsets());
    assertEquals(290, back.get(0).length(1));
    assertEquals(0, back.get(1).length(0));
  }

  @Test
  void dataFilesOfSeveralWindowsAreReadWithoutCrossingOne() {
    List<RemoteDescriptor> windows = List.of(new RemoteDescriptor(7, 0x10000, 100, 1),
        new RemoteDescriptor(7, 0x20000, 100, 2), new RemoteDescriptor(7, 0x30000, 30, 3));
    List<RangeProtocol.Query> one = List.of(new RangeProtocol.Query(5, 0, 2));
    RangeProtocol.Answer answer = RangeProtocol.decodeResponse(
        RangeProtocol.encodeResponse(List.of(new RangeProtocol.Answer(windows, new long[] {0, 95, 230}))), one).get(0);
    assertEquals(windows, answer.windows());
    assertEquals(230, answer.fileLength());
    // [90, 230) with pieces of at most 64 bytes: split at 100 and 200 (window ends) and at 64-byte steps.
    List<RangeProtocol.Piece> pieces = answer.pieces(90, 140, 64);
    assertEquals(List.of(
        new RangeProtocol.Piece(windows.get(0), 90, 0, 10),
        new RangeProtocol.Piece(windows.get(1), 0, 10, 64),
        new RangeProtocol.Piece(windows.get(1), 64, 74, 36),
        new RangeProtocol.Piece(windows.get(2), 0, 110, 30)), pieces);
    assertThrows(IllegalArgumentException.class, () -> answer.pieces(200, 31, 64));
    // Windows other than the last must share one length.
    assertThrows(IllegalArgumentException.class, () -> new RangeProtocol.Answer(
        List.of(new RemoteDescriptor(7, 0, 100, 1), new RemoteDescriptor(7, 0, 90, 2), REGION), new long[] {0}));
    ByteBuffer pastEnd = RangeProtocol.encodeResponse(List.of(new RangeProtocol.Answer(windows, new long[] {0, 231})));
    assertThrows(IllegalArgumentException.class,
        () -> RangeProtocol.decodeResponse(pastEnd, List.of(new RangeProtocol.Query(5, 0, 1))));
    ByteBuffer noWindows = ByteBuffer.allocate(4 + 4 + 16).putInt(1).putInt(0).putLong(0).putLong(0).flip();
    assertThrows(IllegalArgumentException.class,
        () -> RangeProtocol.decodeResponse(noWindows, List.of(new RangeProtocol.Query(5, 0, 1))));
  }

  @Test
  void malformedRangeMessagesAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeRequest(ByteBuffer.allocate(3)));
    ByteBuffer wrongVersion = ByteBuffer.allocate(12).putInt(9).putInt(1).putInt(0).flip();
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeRequest(wrongVersion));
    ByteBuffer wrongCount = ByteBuffer.allocate(12).putInt(RangeProtocol.VERSION).putInt(1).putInt(5).flip();
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeRequest(wrongCount));
    assertThrows(IllegalArgumentException.class, () -> new RangeProtocol.Query(1, 3, 3));

    List<RangeProtocol.Query> one = List.of(new RangeProtocol.Query(5, 0, 2));
    ByteBuffer decreasing = RangeProtocol.encodeResponse(
        List.of(new RangeProtocol.Answer(ONE, new long[] {0, 50, 20})));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(decreasing, one));
    ByteBuffer pastEnd = RangeProtocol.encodeResponse(
        List.of(new RangeProtocol.Answer(ONE, new long[] {0, 50, 2000})));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(pastEnd, one));
    ByteBuffer wrongShape = RangeProtocol.encodeResponse(
        List.of(new RangeProtocol.Answer(ONE, new long[] {0, 50})));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(wrongShape, one));
  }
}
