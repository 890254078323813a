package io.sluice.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ProtocolException;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Input generators for the frame fuzz tests, and one {@link Codec} per payload layout of {@link
 * Frames}: how to make a valid sample, decode, re-encode and check what a decoder accepted.
 * Stateless; randomness comes from the caller's seeded {@link Random}.
 */
final class FrameFuzzing {
  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_./ \u00e9\u20ac\u4e2d\ud83d\ude00";

  private FrameFuzzing() {}

  /** One payload layout under test. */
  interface Codec {
    String name();

    byte[] sample(Random random);

    Object decode(ByteBuffer in) throws ProtocolException;

    byte[] encode(Object decoded);

    /** True when the layout has exactly one encoding per value (no strings). */
    boolean canonical();

    void checkInvariants(Object decoded);
  }

  private record SimpleCodec(
      String name,
      Function<Random, ByteBuffer> sampler,
      Decoder decoder,
      Function<Object, ByteBuffer> encoder,
      boolean canonical,
      Consumer<Object> invariants) implements Codec {
    @Override
    public byte[] sample(Random random) {
      return toArray(sampler.apply(random));
    }

    @Override
    public Object decode(ByteBuffer in) throws ProtocolException {
      return decoder.decode(in);
    }

    @Override
    public byte[] encode(Object decoded) {
      return toArray(encoder.apply(decoded));
    }

    @Override
    public void checkInvariants(Object decoded) {
      invariants.accept(decoded);
    }
  }

  @FunctionalInterface
  private interface Decoder {
    Object decode(ByteBuffer in) throws ProtocolException;
  }

  static List<Codec> codecs() {
    Consumer<Object> none = o -> {};
    return List.of(
        new SimpleCodec("HELLO",
            r -> new Frames.Hello(Frames.VERSION, r.nextLong(), r.nextInt(2), randomBytes(r, Frames.NONCE_LENGTH)).encode(),
            Frames.Hello::decode, o -> ((Frames.Hello) o).encode(), true, none),
        new SimpleCodec("CHALLENGE",
            r -> new Frames.Challenge(r.nextInt(65536), r.nextLong(), r.nextInt(2), randomBytes(r, Frames.NONCE_LENGTH),
                randomBytes(r, Frames.NONCE_LENGTH)).encode(),
            Frames.Challenge::decode, o -> ((Frames.Challenge) o).encode(), true, none),
        new SimpleCodec("AUTH",
            r -> new Frames.Auth(randomBytes(r, Frames.NONCE_LENGTH)).encode(),
            Frames.Auth::decode, o -> ((Frames.Auth) o).encode(), true, none),
        new SimpleCodec("READ_REQUEST",
            r -> {
              ByteBuffer b = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
              new Frames.ReadRequestFrame(r.nextLong(), r.nextLong() & Long.MAX_VALUE, r.nextInt(1 << 30)).encode(b);
              return b.flip();
            },
            Frames.ReadRequestFrame::decode,
            o -> {
              ByteBuffer b = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
              ((Frames.ReadRequestFrame) o).encode(b);
              return b.flip();
            },
            true,
            o -> {
              Frames.ReadRequestFrame f = (Frames.ReadRequestFrame) o;
              assertTrue(f.offset() >= 0 && f.length() >= 0, "accepted " + f);
            }),
        new SimpleCodec("ERROR",
            r -> new Frames.ErrorFrame(ErrorCode.values()[r.nextInt(ErrorCode.values().length)],
                randomText(r, 40)).encode(),
            Frames.ErrorFrame::decode, o -> ((Frames.ErrorFrame) o).encode(), false,
            o -> assertTrue(((Frames.ErrorFrame) o).code() != null)),
        new SimpleCodec("SHM_INFO",
            r -> new Frames.ShmInfo("/dev/shm/" + randomText(r, 30), randomBytes(r, Frames.SHM_TOKEN_LENGTH)).encode(),
            Frames.ShmInfo::decode, o -> ((Frames.ShmInfo) o).encode(), false,
            o -> assertTrue(((Frames.ShmInfo) o).token().length == Frames.SHM_TOKEN_LENGTH)),
        new SimpleCodec("SHM_OPEN",
            r -> new Frames.ShmOpen(r.nextLong()).encode(),
            Frames.ShmOpen::decode, o -> ((Frames.ShmOpen) o).encode(), true, none),
        new SimpleCodec("SHM_REGION",
            r -> new Frames.ShmRegion("/dev/shm/" + randomText(r, 30), r.nextLong() & Long.MAX_VALUE,
                r.nextLong() & Long.MAX_VALUE, r.nextInt(Integer.MAX_VALUE)).encode(),
            Frames.ShmRegion::decode, o -> ((Frames.ShmRegion) o).encode(), false,
            o -> {
              Frames.ShmRegion s = (Frames.ShmRegion) o;
              assertTrue(s.fileOffset() >= 0 && s.length() >= 0 && s.slot() >= 0, "accepted " + s);
            }));
  }

  static byte[] randomBytes(Random random, int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }

  /** Text of up to {@code maxChars} characters, mixing one- to four-byte UTF-8 sequences. */
  static String randomText(Random random, int maxChars) {
    StringBuilder sb = new StringBuilder();
    int n = random.nextInt(maxChars + 1);
    while (sb.length() < n) {
      int i = random.nextInt(ALPHABET.length());
      char c = ALPHABET.charAt(i);
      if (Character.isHighSurrogate(c)) {
        sb.append(c).append(ALPHABET.charAt(i + 1));
      } else if (!Character.isLowSurrogate(c)) {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /** A copy with one to four random changes: flipped bits, overwritten bytes, or a cut. */
  static byte[] mutate(Random random, byte[] valid) {
    byte[] b = valid.clone();
    if (b.length == 0) {
      return randomBytes(random, 1 + random.nextInt(8));
    }
    int changes = 1 + random.nextInt(4);
    for (int c = 0; c < changes; c++) {
      int at = random.nextInt(b.length);
      switch (random.nextInt(3)) {
        case 0 -> b[at] ^= (byte) (1 << random.nextInt(8));
        case 1 -> b[at] = (byte) random.nextInt(256);
        default -> b[at] = random.nextBoolean() ? (byte) 0xff : 0;
      }
    }
    return b;
  }

  static String hex(byte[] b) {
    return b.length > 64 ? HexFormat.of().formatHex(b, 0, 64) + "... (" + b.length + " bytes)" : HexFormat.of().formatHex(b);
  }

  private static byte[] toArray(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
