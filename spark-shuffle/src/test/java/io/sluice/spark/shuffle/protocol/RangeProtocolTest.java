package io.sluice.spark.shuffle.protocol;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

  /** An answer for offsets whose partitions have arbitrary checksums (0 for the empty ones). */
  private static RangeProtocol.Answer answer(List<RemoteDescriptor> windows, long... offsets) {
    int[] checksums = new int[offsets.length - 1];
    for (int i = 0; i < checksums.length; i++) {
      checksums[i] = offsets[i + 1] == offsets[i] ? 0 : 0x9e3779b9 * (i + 1);
    }
    return new RangeProtocol.Answer(windows, offsets, checksums);
  }

  @Test
  void rangeResponseRoundTrip() {
    List<RangeProtocol.Query> queries = List.of(new RangeProtocol.Query(5, 1, 4), new RangeProtocol.Query(6, 0, 1));
    List<RangeProtocol.Answer> answers = List.of(
        new RangeProtocol.Answer(ONE, new long[] {10, 10, 300, 1000}, new int[] {0, 0xcafebabe, -1}),
        new RangeProtocol.Answer(ONE, new long[] {0, 0}, new int[] {0}));
    ByteBuffer encoded = RangeProtocol.encodeResponse(answers);
    assertEquals(RangeProtocol.responseBytes(queries), encoded.remaining());
    List<RangeProtocol.Answer> back = RangeProtocol.decodeResponse(encoded, queries);
    assertEquals(ONE, back.get(0).windows());
    assertArrayEquals(new long[] {10, 10, 300, 1000}, back.get(0).offsets());
    assertArrayEquals(new int[] {0, 0xcafebabe, -1}, back.get(0).checksums());
    assertEquals(0xcafebabe, back.get(0).checksum(1));
    assertEquals(290, back.get(0).length(1));
    assertEquals(0, back.get(1).length(0));
    assertArrayEquals(new int[] {0}, back.get(1).checksums());
  }

  @Test
  void version3ResponsesCarryOneChecksumPerPartitionAfterTheOffsets() {
    // The format by hand: count | windows | descriptor | 3 offsets | 2 checksums.
    ByteBuffer expected = ByteBuffer.allocate(4 + 4 + RemoteDescriptor.ENCODED_LENGTH + 3 * 8 + 2 * 4);
    expected.putInt(1).putInt(1);
    REGION.encode(expected);
    expected.putLong(0).putLong(40).putLong(100).putInt(0x01020304).putInt(0xfffffffe).flip();
    ByteBuffer encoded = RangeProtocol.encodeResponse(
        List.of(new RangeProtocol.Answer(ONE, new long[] {0, 40, 100}, new int[] {0x01020304, 0xfffffffe})));
    assertEquals(expected, encoded);
    assertEquals(3, RangeProtocol.VERSION);
  }

  @Test
  void answersNeedOneChecksumPerPartition() {
    assertThrows(IllegalArgumentException.class, () -> new RangeProtocol.Answer(ONE, new long[] {0, 10}, new int[0]));
    assertThrows(IllegalArgumentException.class,
        () -> new RangeProtocol.Answer(ONE, new long[] {0, 10}, new int[] {1, 2}));
  }

  @Test
  void responsesWithoutTheirChecksumsOrWithTooManyAreRefused() {
    List<RangeProtocol.Query> two = List.of(new RangeProtocol.Query(5, 0, 2));
    ByteBuffer full = RangeProtocol.encodeResponse(List.of(answer(ONE, 0, 10, 30)));
    // A version-2 answer (no checksums) or one cut anywhere in its checksums is truncated.
    for (int cut = 1; cut <= 8; cut++) {
      ByteBuffer shorter = full.duplicate().limit(full.limit() - cut);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> RangeProtocol.decodeResponse(shorter, two));
      assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }
    ByteBuffer longer = ByteBuffer.allocate(full.remaining() + 4).put(full.duplicate()).putInt(7).flip();
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(longer, two));
    // An empty partition has the CRC32C of no bytes.
    ByteBuffer emptyWithChecksum = RangeProtocol.encodeResponse(
        List.of(new RangeProtocol.Answer(ONE, new long[] {0, 0, 30}, new int[] {5, 6})));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(emptyWithChecksum, two));
  }

  @Test
  void anOversizedResponseIsRefusedBeforeAllocatingForIt() {
    // A peer claiming 2^31 - 1 windows, or a query of 2^31 - 2 partitions answered by a few bytes:
    // both are refused from the bytes that are there, allocating nothing for the claim.
    ByteBuffer manyWindows = ByteBuffer.allocate(8 + RemoteDescriptor.ENCODED_LENGTH).putInt(1)
        .putInt(Integer.MAX_VALUE).put(new byte[RemoteDescriptor.ENCODED_LENGTH]).flip();
    assertThrows(IllegalArgumentException.class,
        () -> RangeProtocol.decodeResponse(manyWindows, List.of(new RangeProtocol.Query(5, 0, 1))));
    List<RangeProtocol.Query> huge = List.of(new RangeProtocol.Query(5, 0, Integer.MAX_VALUE - 1));
    ByteBuffer small = ByteBuffer.allocate(8 + RemoteDescriptor.ENCODED_LENGTH + 16).putInt(1).putInt(1);
    REGION.encode(small);
    small.putLong(0).putLong(0).flip();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RangeProtocol.decodeResponse(small, huge));
    assertTrue(e.getMessage().contains("truncated"), e.getMessage());
  }

  @Test
  void aVersion2RequestIsRefusedNamingBothVersions() {
    ByteBuffer v2 = ByteBuffer.allocate(12 + 16).putInt(2).putInt(1).putInt(1).putLong(5).putInt(0).putInt(1).flip();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeRequest(v2));
    assertTrue(e.getMessage().contains("version 2") && e.getMessage().contains("speaks 3"), e.getMessage());
  }

  @Test
  void dataFilesOfSeveralWindowsAreReadWithoutCrossingOne() {
    List<RemoteDescriptor> windows = List.of(new RemoteDescriptor(7, 0x10000, 100, 1),
        new RemoteDescriptor(7, 0x20000, 100, 2), new RemoteDescriptor(7, 0x30000, 30, 3));
    List<RangeProtocol.Query> one = List.of(new RangeProtocol.Query(5, 0, 2));
    RangeProtocol.Answer answer = RangeProtocol.decodeResponse(
        RangeProtocol.encodeResponse(List.of(answer(windows, 0, 95, 230))), one).get(0);
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
        List.of(new RemoteDescriptor(7, 0, 100, 1), new RemoteDescriptor(7, 0, 90, 2), REGION), new long[] {0},
        new int[0]));
    ByteBuffer pastEnd = RangeProtocol.encodeResponse(List.of(answer(windows, 0, 231)));
    assertThrows(IllegalArgumentException.class,
        () -> RangeProtocol.decodeResponse(pastEnd, List.of(new RangeProtocol.Query(5, 0, 1))));
    ByteBuffer noWindows = ByteBuffer.allocate(4 + 4 + 20).putInt(1).putInt(0).putLong(0).putLong(0).putInt(0).flip();
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
        List.of(answer(ONE, 0, 50, 20)));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(decreasing, one));
    ByteBuffer pastEnd = RangeProtocol.encodeResponse(
        List.of(answer(ONE, 0, 50, 2000)));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(pastEnd, one));
    ByteBuffer wrongShape = RangeProtocol.encodeResponse(
        List.of(answer(ONE, 0, 50)));
    assertThrows(IllegalArgumentException.class, () -> RangeProtocol.decodeResponse(wrongShape, one));
  }
}
