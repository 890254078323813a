package io.sluice.transport.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.crypto.Hkdf;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.X25519;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Input generators for the frame fuzz tests, the payload fuzzing loop they share, and one {@link
 * Codec} per payload layout of {@link Frames}: how to make a valid sample, decode, re-encode and check what a decoder accepted.
 * Stateless; randomness comes from the caller's seeded {@link Random}.
 */
public final class FrameFuzzing {
  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_./ \u00e9\u20ac\u4e2d\ud83d\ude00";

  private FrameFuzzing() {}

  /** One payload layout under test. */
  public interface Codec {
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
  public interface Decoder {
    Object decode(ByteBuffer in) throws ProtocolException;
  }

  /** The codecs of the carrier's own payloads ({@link Frames}). */
  static List<Codec> codecs() {
    Consumer<Object> none = o -> {};
    return List.of(
        new SimpleCodec("HELLO",
            r -> new Frames.Hello(Frames.VERSION, r.nextLong(), r.nextInt(2), randomBytes(r, Frames.NONCE_LENGTH),
                randomBytes(r, X25519.KEY_LENGTH), randomBytes(r, NodeIdentity.PUBLIC_KEY_LENGTH)).encode(),
            Frames.Hello::decode, o -> ((Frames.Hello) o).encode(), true, none),
        new SimpleCodec("CHALLENGE",
            r -> new Frames.Challenge(r.nextInt(65536), r.nextLong(), r.nextInt(2), randomBytes(r, Frames.NONCE_LENGTH),
                randomBytes(r, X25519.KEY_LENGTH), randomBytes(r, NodeIdentity.PUBLIC_KEY_LENGTH)).encode(),
            Frames.Challenge::decode, o -> ((Frames.Challenge) o).encode(), true, none),
        new SimpleCodec("AUTH",
            r -> new Frames.Auth(randomBytes(r, Hkdf.HASH_LENGTH), randomBytes(r, NodeIdentity.SIGNATURE_LENGTH))
                .encode(),
            Frames.Auth::decode, o -> ((Frames.Auth) o).encode(), true, none),
        new SimpleCodec("AUTH_OK",
            r -> new Frames.AuthOk(randomBytes(r, NodeIdentity.SIGNATURE_LENGTH)).encode(),
            Frames.AuthOk::decode, o -> ((Frames.AuthOk) o).encode(), true, none),
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
            o -> assertTrue(((Frames.ErrorFrame) o).code() != null)));
  }

  /**
   * A codec from its parts.
   *
   * @param canonical true when the layout has exactly one encoding per value (no strings)
   */
  public static Codec codec(String name, Function<Random, ByteBuffer> sampler, Decoder decoder,
      Function<Object, ByteBuffer> encoder, boolean canonical, Consumer<Object> invariants) {
    return new SimpleCodec(name, sampler, decoder, encoder, canonical, invariants);
  }

  /**
   * Feeds {@code codec} truncated, extended, mutated and random payloads: bad input may only
   * raise {@link ProtocolException}, a truncated or extended payload must be rejected, anything
   * accepted must satisfy the invariants and, if canonical, re-encode to the same bytes.
   */
  public static void fuzzPayloads(Codec codec, Random random, int iterations) {
    for (int i = 0; i < iterations; i++) {
      byte[] valid = codec.sample(random);
      switch (i % 4) {
        case 0 -> {
          byte[] prefix = Arrays.copyOf(valid, random.nextInt(valid.length));
          expectRejected(codec, prefix, "truncated");
        }
        case 1 -> {
          byte[] longer = Arrays.copyOf(valid, valid.length + 1 + random.nextInt(8));
          expectRejected(codec, longer, "with trailing bytes");
        }
        case 2 -> decodeAndCheck(codec, mutate(random, valid));
        default -> decodeAndCheck(codec, randomBytes(random,
            random.nextInt(8) == 0 ? random.nextInt(5000) : random.nextInt(100)));
      }
    }
  }

  private static void expectRejected(Codec codec, byte[] bytes, String what) {
    try {
      codec.decode(ByteBuffer.wrap(bytes));
      fail(codec.name() + " accepted a payload " + what + ": " + hex(bytes));
    } catch (ProtocolException expected) {
      // the only acceptable failure
    } catch (RuntimeException e) {
      throw new AssertionError(codec.name() + " threw " + e + " for a payload " + what + ": " + hex(bytes), e);
    }
  }

  private static void decodeAndCheck(Codec codec, byte[] bytes) {
    Object decoded;
    try {
      decoded = codec.decode(ByteBuffer.wrap(bytes));
    } catch (ProtocolException expected) {
      return;
    } catch (RuntimeException e) {
      throw new AssertionError(codec.name() + " threw " + e + " for " + hex(bytes), e);
    }
    codec.checkInvariants(decoded);
    if (codec.canonical()) {
      assertArrayEquals(bytes, codec.encode(decoded), codec.name() + " accepted a non-canonical encoding");
    }
  }

  public static byte[] randomBytes(Random random, int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }

  /** Text of up to {@code maxChars} characters, mixing one- to four-byte UTF-8 sequences. */
  public static String randomText(Random random, int maxChars) {
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
  public static byte[] mutate(Random random, byte[] valid) {
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

  public static String hex(byte[] b) {
    return b.length > 64 ? HexFormat.of().formatHex(b, 0, 64) + "... (" + b.length + " bytes)" : HexFormat.of().formatHex(b);
  }

  private static byte[] toArray(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }
}
