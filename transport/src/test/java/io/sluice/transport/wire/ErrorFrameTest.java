package io.sluice.transport.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.UnknownKeyException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * ERROR's text (docs/protocol.md, 4.3): what this side writes is well-formed UTF-8 of at most 1024
 * code points that fits a control payload, cut at a code point boundary; what it reads from a peer
 * is decoded with U+FFFD for ill-formed bytes and kept to 1024 code points, and the error is the
 * one its code says whatever the text; a text length that is not the payload's is refused.
 */
class ErrorFrameTest {
  private static final String SMILE = "\uD83D\uDE00"; // U+1F600, a surrogate pair in Java, 4 bytes of UTF-8

  /** An ERROR payload as a peer might send it: code, u16 n, then {@code text} as it is. */
  private static ByteBuffer payload(ErrorCode code, int n, byte[] text) {
    return ByteBuffer.allocate(3 + text.length).put(code.id()).putShort((short) n).put(text).flip();
  }

  private static byte[] text(ByteBuffer encoded) {
    ByteBuffer b = encoded.duplicate().position(1);
    byte[] t = new byte[b.getShort() & 0xffff];
    b.get(t);
    assertEquals(0, b.remaining(), "n is what the payload holds after code and length");
    return t;
  }

  /** Decodes strictly: fails the test unless {@code utf8} is well-formed UTF-8. */
  private static String strictly(byte[] utf8) {
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(utf8)).toString();
    } catch (CharacterCodingException e) {
      throw new AssertionError("ill-formed UTF-8 written", e);
    }
  }

  @Test
  void illFormedTextFromAPeerIsReadWithReplacementsAndTheCodeDecides() throws Exception {
    // C3 then '(' : a lead byte without its continuation; F0 9F 98 then 'k': a 4-byte sequence
    // cut short; C0 AF: an overlong encoding, two ill-formed bytes. Each maximal ill-formed
    // subsequence is one U+FFFD.
    byte[] text = {'n', 'o', ' ', (byte) 0xC3, '(', ' ', (byte) 0xF0, (byte) 0x9F, (byte) 0x98, 'k', 'e', 'y', ' ',
        (byte) 0xC0, (byte) 0xAF};
    Frames.ErrorFrame e = Frames.ErrorFrame.decode(payload(ErrorCode.UNKNOWN_KEY, text.length, text));
    assertEquals(ErrorCode.UNKNOWN_KEY, e.code());
    assertEquals("no \uFFFD( \uFFFDkey \uFFFD\uFFFD", e.message());
    UnknownKeyException reported = assertInstanceOf(UnknownKeyException.class, e.code().toException(e.message()));
    assertTrue(reported.getMessage().contains("no \uFFFD( \uFFFDkey"), reported.getMessage());
  }

  @Test
  void aLongTextIsCutAtACodePointBoundaryWithASurrogatePairAtTheCut() throws Exception {
    // The pair is the 1024th code point and its 1024th and 1025th chars: a cut by chars would split it.
    String message = "a".repeat(1023) + SMILE + "b";
    byte[] written = text(new Frames.ErrorFrame(ErrorCode.HANDLER_FAILED, message).encode());
    String sent = strictly(written);
    assertEquals("a".repeat(1023) + SMILE, sent, "1024 code points, the pair whole");
    assertEquals(1024, sent.codePointCount(0, sent.length()));
    assertEquals(sent, Frames.ErrorFrame.decode(payload(ErrorCode.HANDLER_FAILED, written.length, written)).message());
  }

  @Test
  void aTextOfFourByteCodePointsIsCutToFitTheControlPayload() throws Exception {
    ByteBuffer encoded = new Frames.ErrorFrame(ErrorCode.PROTOCOL, SMILE.repeat(1100)).encode();
    assertTrue(encoded.remaining() <= Frames.MAX_CONTROL_PAYLOAD, encoded.remaining() + " bytes");
    String sent = strictly(text(encoded));
    assertEquals(SMILE.repeat((Frames.MAX_CONTROL_PAYLOAD - 3) / 4), sent, "whole code points, as many as fit");
  }

  @Test
  void anUnpairedSurrogateIsWrittenAsAQuestionMark() throws Exception {
    String message = "x".repeat(1022) + "\uD83D" + "y" + SMILE;
    String sent = strictly(text(new Frames.ErrorFrame(ErrorCode.PROTOCOL, message).encode()));
    assertEquals("x".repeat(1022) + "?y", sent);
  }

  @Test
  void aPeersLongTextIsKeptTo1024CodePoints() throws Exception {
    byte[] text = ("é".repeat(1000) + SMILE.repeat(30) + "z".repeat(500)).getBytes(StandardCharsets.UTF_8);
    String read = Frames.ErrorFrame.decode(payload(ErrorCode.UNAVAILABLE, text.length, text)).message();
    assertEquals("é".repeat(1000) + SMILE.repeat(24), read);
  }

  @Test
  void aTextLengthOtherThanThePayloadsIsAProtocolError() {
    byte[] text = "refused".getBytes(StandardCharsets.US_ASCII);
    for (int n : new int[] {0, text.length - 1, text.length + 1, 0xffff}) {
      assertThrows(ProtocolException.class, () -> Frames.ErrorFrame.decode(payload(ErrorCode.PROTOCOL, n, text)),
          "n = " + n + " for " + text.length + " bytes");
    }
    assertThrows(ProtocolException.class, () -> Frames.ErrorFrame.decode(ByteBuffer.wrap(new byte[] {7, 0})),
        "no room for n");
  }
}
