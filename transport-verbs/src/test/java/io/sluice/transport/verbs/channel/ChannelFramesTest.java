package io.sluice.transport.verbs.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.wire.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Round trips of message-channel frames and rejection of malformed ones. No device needed. */
class ChannelFramesTest {
  private static final int MAX = 1 << 20;

  @Test
  void framesRoundTrip() throws Exception {
    ByteBuffer message = ByteBuffer.wrap("..hello..".getBytes(StandardCharsets.US_ASCII), 2, 5);
    ChannelFrames.Frame request = ChannelFrames.decode(
        ChannelFrames.inline(ChannelFrames.Type.REQUEST, 7, message), MAX);
    assertEquals(ChannelFrames.Type.REQUEST, request.type());
    assertEquals(7, request.correlationId());
    assertEquals("hello", StandardCharsets.US_ASCII.decode(request.body()).toString());
    assertEquals(2, message.position(), "encoding must not move the message");

    ByteBuffer full = ByteBuffer.allocate(ChannelFrames.INLINE_BYTES);
    ByteBuffer frame = ChannelFrames.inline(ChannelFrames.Type.RESPONSE, -1, full);
    assertEquals(ChannelFrames.SLOT_BYTES, frame.remaining());
    assertEquals(ChannelFrames.INLINE_BYTES, ChannelFrames.decode(frame, MAX).body().remaining());
    assertThrows(IllegalArgumentException.class,
        () -> ChannelFrames.inline(ChannelFrames.Type.REQUEST, 1, ByteBuffer.allocate(ChannelFrames.INLINE_BYTES + 1)));

    ChannelFrames.Staged staged = new ChannelFrames.Staged(0x7f00_1234_5000L, 0xabc, MAX);
    ChannelFrames.Frame s = ChannelFrames.decode(ChannelFrames.staged(ChannelFrames.Type.RESPONSE_STAGED, 3, staged), MAX);
    assertEquals(ChannelFrames.Type.RESPONSE_STAGED, s.type());
    assertEquals(staged, s.staged());

    ChannelFrames.Frame e = ChannelFrames.decode(ChannelFrames.error(9, ErrorCode.HANDLER_FAILED, "disk on fire"), MAX);
    assertEquals(ErrorCode.HANDLER_FAILED, e.errorCode());
    assertEquals("disk on fire", e.errorText());
    assertEquals(RemoteHandlerException.class, e.errorCode().toException(e.errorText()).getClass());
    String huge = "x".repeat(3 * ChannelFrames.SLOT_BYTES);
    assertEquals(ChannelFrames.SLOT_BYTES, ChannelFrames.error(1, ErrorCode.PROTOCOL, huge).remaining());

    ChannelFrames.Frame r = ChannelFrames.decode(ChannelFrames.release(11), MAX);
    assertEquals(ChannelFrames.Type.RELEASE, r.type());
    assertEquals(11, r.correlationId());
    assertNull(r.staged());
  }

  @Test
  void malformedFramesAreRejected() {
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(ByteBuffer.allocate(7), MAX));
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(ByteBuffer.allocate(ChannelFrames.SLOT_BYTES + 1), MAX));
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(ByteBuffer.allocate(8), MAX)); // type 0
    ByteBuffer badCode = ChannelFrames.release(1);
    badCode.put(1, (byte) 4);
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(badCode, MAX));
    ByteBuffer reserved = ChannelFrames.release(1);
    reserved.put(3, (byte) 1);
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(reserved, MAX));
    ByteBuffer releaseWithBody = ByteBuffer.allocate(9).put((byte) 6).flip().limit(9);
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(releaseWithBody, MAX));
    ByteBuffer unknownError = ChannelFrames.error(1, ErrorCode.PROTOCOL, "x");
    unknownError.put(1, (byte) 99);
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(unknownError, MAX));
    for (int length : new int[] {0, -1, MAX + 1}) {
      ByteBuffer staged = ChannelFrames.staged(ChannelFrames.Type.REQUEST_STAGED, 1, new ChannelFrames.Staged(1, 2, length));
      assertThrows(ProtocolException.class, () -> ChannelFrames.decode(staged, MAX), "staged length " + length);
    }
    ByteBuffer shortStaged = ChannelFrames.staged(ChannelFrames.Type.REQUEST_STAGED, 1, new ChannelFrames.Staged(1, 2, 3));
    shortStaged.limit(shortStaged.limit() - 1);
    assertThrows(ProtocolException.class, () -> ChannelFrames.decode(shortStaged, MAX));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButProtocolException() {
    Random random = new Random(17);
    for (int i = 0; i < 20_000; i++) {
      byte[] b = new byte[random.nextInt(40)];
      random.nextBytes(b);
      if (b.length > 0 && random.nextBoolean()) {
        b[0] = (byte) (1 + random.nextInt(6)); // a known type, to reach the body checks
      }
      try {
        ChannelFrames.decode(ByteBuffer.wrap(b), MAX);
      } catch (ProtocolException expected) {
        // malformed: the only acceptable failure
      }
    }
  }
}
