package io.sluice.transport.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.crypto.NodeIdentity;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Feeds random, truncated and mutated bytes to the frame header decoder and to every payload
 * decoder of {@link Frames}. Bad input may only ever raise {@link ProtocolException}; anything a
 * decoder accepts must satisfy the layout's invariants and, for layouts without strings, encode
 * back to exactly the bytes it came from. Seeded, so a failure replays.
 */
class FrameFuzzTest {
  private static final long SEED = 0x5C_F0_22L;
  private static final int HEADER_ITERATIONS = 300_000;
  private static final int PAYLOAD_ITERATIONS = 40_000;

  @Test
  void headerRoundTrips() throws ProtocolException {
    Random random = new Random(SEED);
    FrameType[] types = FrameType.values();
    for (int i = 0; i < 20_000; i++) {
      FrameHeader h = new FrameHeader(types[random.nextInt(types.length)],
          random.nextInt(i % 2 == 0 ? 100 : Integer.MAX_VALUE), random.nextLong());
      ByteBuffer b = h.toBuffer();
      assertEquals(FrameHeader.LENGTH, b.remaining());
      FrameHeader back = FrameHeader.decode(b, h.payloadLength());
      assertEquals(h, back);
      assertEquals(FrameHeader.LENGTH, b.position(), "decode consumes exactly the header");
    }
  }

  @Test
  void headerRejectsEveryTruncation() {
    ByteBuffer valid = new FrameHeader(FrameType.REQUEST, 10, 42).toBuffer();
    for (int n = 0; n < FrameHeader.LENGTH; n++) {
      ByteBuffer prefix = ByteBuffer.wrap(Arrays.copyOf(valid.array(), n));
      assertThrows(ProtocolException.class, () -> FrameHeader.decode(prefix, 100), "prefix of " + n);
    }
  }

  @Test
  void headerRejectsEachKindOfDamage() {
    byte[] valid = new FrameHeader(FrameType.RESPONSE, 10, 42).toBuffer().array();
    byte[] magic = valid.clone();
    magic[0] = 0x5D;
    byte[] type = valid.clone();
    type[1] = 0;
    byte[] unknownType = valid.clone();
    unknownType[1] = (byte) 200;
    byte[] reserved = valid.clone();
    reserved[3] = 1;
    byte[] negative = valid.clone();
    negative[4] = (byte) 0x80;
    for (byte[] bad : List.of(magic, type, unknownType, reserved, negative)) {
      assertThrows(ProtocolException.class, () -> FrameHeader.decode(ByteBuffer.wrap(bad), Long.MAX_VALUE));
    }
    assertThrows(ProtocolException.class, () -> FrameHeader.decode(ByteBuffer.wrap(valid), 9), "over the limit");
  }

  @Test
  void randomAndMutatedHeadersOnlyRaiseProtocolException() {
    Random random = new Random(SEED + 1);
    byte[] template = new FrameHeader(FrameType.READ_REQUEST, 20, 7).toBuffer().array();
    int accepted = 0;
    for (int i = 0; i < HEADER_ITERATIONS; i++) {
      byte[] b;
      switch (i % 3) {
        case 0 -> b = FrameFuzzing.randomBytes(random, random.nextInt(24));
        case 1 -> {
          // Mostly plausible: right magic and reserved bits, random type, length and id.
          b = FrameFuzzing.randomBytes(random, FrameHeader.LENGTH + random.nextInt(4));
          b[0] = FrameHeader.MAGIC;
          if (random.nextInt(4) != 0) {
            b[2] = 0;
            b[3] = 0;
          }
          if (random.nextBoolean()) {
            b[1] = (byte) random.nextInt(16);
          }
        }
        default -> b = FrameFuzzing.mutate(random, template);
      }
      long max = switch (random.nextInt(4)) {
        case 0 -> 0;
        case 1 -> random.nextInt(5000);
        case 2 -> Integer.MAX_VALUE;
        default -> Long.MAX_VALUE;
      };
      ByteBuffer in = ByteBuffer.wrap(b);
      FrameHeader h;
      try {
        h = FrameHeader.decode(in, max);
      } catch (ProtocolException expected) {
        continue;
      } catch (RuntimeException e) {
        throw new AssertionError("header decoder threw " + e + " for " + FrameFuzzing.hex(b), e);
      }
      accepted++;
      assertEquals(FrameHeader.LENGTH, in.position());
      assertTrue(h.payloadLength() >= 0 && h.payloadLength() <= max, "accepted length " + h.payloadLength());
      assertArrayEquals(Arrays.copyOf(b, FrameHeader.LENGTH), h.toBuffer().array(),
          "an accepted header re-encodes to the same bytes");
    }
    assertTrue(accepted > 1000, "the fuzzer rarely produced a valid header (" + accepted + "); it tests too little");
  }

  @Test
  void everyTypeAndErrorCodeIdDecodesOrIsRejected() throws ProtocolException {
    int types = 0;
    int codes = 0;
    for (int id = 0; id < 256; id++) {
      byte b = (byte) id;
      try {
        assertEquals(b, FrameType.fromId(b).id());
        types++;
      } catch (ProtocolException expected) {
        // unknown id
      }
      try {
        assertEquals(b, ErrorCode.fromId(b).id());
        codes++;
      } catch (ProtocolException expected) {
        // unknown id
      }
    }
    assertEquals(FrameType.values().length, types);
    assertEquals(ErrorCode.values().length, codes);
  }

  @Test
  void payloadsRoundTrip() throws ProtocolException {
    Random random = new Random(SEED + 2);
    for (int i = 0; i < 2000; i++) {
      byte[] n1 = FrameFuzzing.randomBytes(random, Frames.NONCE_LENGTH);
      byte[] n2 = FrameFuzzing.randomBytes(random, Frames.NONCE_LENGTH);
      byte[] key = FrameFuzzing.randomBytes(random, NodeIdentity.PUBLIC_KEY_LENGTH);
      byte[] sig = FrameFuzzing.randomBytes(random, NodeIdentity.SIGNATURE_LENGTH);
      long node = random.nextLong();
      int version = random.nextInt(65536);

      Frames.Hello hello = Frames.Hello.decode(
          new Frames.Hello(Frames.VERSION, node, version & 1, n1, n2, key).encode());
      assertEquals(Frames.VERSION, hello.version());
      assertEquals(version & 1, hello.flags());
      assertEquals(node, hello.node());
      assertArrayEquals(n1, hello.nonce());
      assertArrayEquals(n2, hello.ephemeralKey());
      assertArrayEquals(key, hello.identityKey());

      Frames.Challenge ch = Frames.Challenge.decode(
          new Frames.Challenge(version, node, version & 1, n1, n2, key).encode());
      assertEquals(version, ch.version());
      assertEquals(version & 1, ch.flags());
      assertEquals(node, ch.node());
      assertArrayEquals(n1, ch.nonce());
      assertArrayEquals(n2, ch.ephemeralKey());
      assertArrayEquals(key, ch.identityKey());

      Frames.Auth auth = Frames.Auth.decode(new Frames.Auth(n2, sig).encode());
      assertArrayEquals(n2, auth.finished());
      assertArrayEquals(sig, auth.signature());
      assertArrayEquals(sig, Frames.AuthOk.decode(new Frames.AuthOk(sig).encode()).signature());

      Frames.ReadRequestFrame rr = new Frames.ReadRequestFrame(random.nextLong(),
          random.nextLong() & Long.MAX_VALUE, random.nextInt(Integer.MAX_VALUE));
      ByteBuffer rb = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
      rr.encode(rb);
      assertEquals(rr, Frames.ReadRequestFrame.decode(rb.flip()));

      ErrorCode[] codes = ErrorCode.values();
      Frames.ErrorFrame ef = new Frames.ErrorFrame(codes[random.nextInt(codes.length)], FrameFuzzing.randomText(random, 200));
      assertEquals(ef, Frames.ErrorFrame.decode(ef.encode()));

      int service = 1 + random.nextInt(255);
      byte[] body = FrameFuzzing.randomBytes(random, random.nextInt(Frames.MAX_CONTROL_PAYLOAD + 1));
      Frames.Control control = Frames.Control.decode(new Frames.Control(service, ByteBuffer.wrap(body)).encode());
      assertEquals(service, control.service());
      assertEquals(ByteBuffer.wrap(body), control.request());
    }
  }

  @Test
  void errorTextIsBoundedToAControlPayload() throws ProtocolException {
    String huge = "\u20ac".repeat(50_000); // three UTF-8 bytes each
    ByteBuffer encoded = new Frames.ErrorFrame(ErrorCode.PROTOCOL, huge).encode();
    assertTrue(encoded.remaining() <= Frames.MAX_CONTROL_PAYLOAD,
        "ERROR payload of " + encoded.remaining() + " bytes exceeds the control limit");
    Frames.ErrorFrame back = Frames.ErrorFrame.decode(encoded);
    assertTrue(huge.startsWith(back.message()), "the text is a prefix of the original");
  }

  @Test
  void controlPayloadsOutsideTheirBoundsAreRejected() {
    assertThrows(ProtocolException.class, () -> Frames.Control.decode(ByteBuffer.allocate(0)), "no service id");
    assertThrows(ProtocolException.class, () -> Frames.Control.decode(ByteBuffer.allocate(5)), "service 0");
    ByteBuffer oversized = ByteBuffer.allocate(Frames.Control.HEADER + Frames.MAX_CONTROL_PAYLOAD + 1).put(0, (byte) 3);
    assertThrows(ProtocolException.class, () -> Frames.Control.decode(oversized), "request over the limit");
    assertThrows(IllegalArgumentException.class,
        () -> new Frames.Control(3, ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD + 1)));
    Random random = new Random(SEED + 4);
    for (int i = 0; i < PAYLOAD_ITERATIONS; i++) {
      byte[] bytes = FrameFuzzing.mutate(random, new Frames.Control(1 + random.nextInt(255),
          ByteBuffer.wrap(FrameFuzzing.randomBytes(random, random.nextInt(64)))).encode().array());
      try {
        Frames.Control c = Frames.Control.decode(ByteBuffer.wrap(bytes));
        assertTrue(c.service() >= 1 && c.service() <= 255 && c.request().remaining() == bytes.length - 1,
            "accepted " + c);
      } catch (ProtocolException expected) {
        // the only acceptable failure
      }
    }
  }

  @Test
  void truncatedExtendedAndMutatedPayloadsOnlyRaiseProtocolException() {
    Random random = new Random(SEED + 3);
    for (FrameFuzzing.Codec codec : FrameFuzzing.codecs()) {
      FrameFuzzing.fuzzPayloads(codec, random, PAYLOAD_ITERATIONS);
    }
  }
}
