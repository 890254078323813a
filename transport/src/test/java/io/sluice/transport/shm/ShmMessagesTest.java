package io.sluice.transport.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.wire.FrameFuzzing;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The shm control service's payloads ({@link ShmMessages}): every one round-trips, and random,
 * truncated and mutated bytes only ever raise {@link ProtocolException}; what a decoder accepts
 * satisfies the layout's invariants. Seeded, so a failure replays.
 */
class ShmMessagesTest {
  private static final long SEED = 0x5C_F0_23L;
  private static final int PAYLOAD_ITERATIONS = 40_000;

  /** An OPEN request as the service reads it. */
  private static long decodeOpen(ByteBuffer in) throws ProtocolException {
    if (ShmMessages.operation(in) != ShmMessages.OPEN) {
      throw new ProtocolException("not an OPEN");
    }
    return ShmMessages.key(in);
  }

  private static List<FrameFuzzing.Codec> codecs() {
    return List.of(
        FrameFuzzing.codec("SHM_INFO",
            r -> ShmMessages.encode(new ShmArena.Info("/dev/shm/" + FrameFuzzing.randomText(r, 30),
                FrameFuzzing.randomBytes(r, ShmArena.TOKEN_LENGTH))),
            ShmMessages::decodeInfo, o -> ShmMessages.encode((ShmArena.Info) o), false,
            o -> assertTrue(((ShmArena.Info) o).token().length == ShmArena.TOKEN_LENGTH)),
        FrameFuzzing.codec("SHM_OPEN",
            r -> ShmMessages.open(r.nextLong()),
            ShmMessagesTest::decodeOpen, o -> ShmMessages.open((Long) o), true, o -> { }),
        FrameFuzzing.codec("SHM_REGION",
            r -> ShmMessages.encode(new ShmArena.Location("/dev/shm/" + FrameFuzzing.randomText(r, 30),
                r.nextLong() & Long.MAX_VALUE, r.nextLong() & Long.MAX_VALUE, r.nextInt(Integer.MAX_VALUE))),
            ShmMessages::decodeLocation, o -> ShmMessages.encode((ShmArena.Location) o), false,
            o -> {
              ShmArena.Location s = (ShmArena.Location) o;
              assertTrue(s.fileOffset() >= 0 && s.length() >= 0 && s.slot() >= 0, "accepted " + s);
            }));
  }

  @Test
  void messagesRoundTrip() throws ProtocolException {
    Random random = new Random(SEED);
    for (int i = 0; i < 2_000; i++) {
      byte[] token = FrameFuzzing.randomBytes(random, ShmArena.TOKEN_LENGTH);
      String dir = "/dev/shm/" + FrameFuzzing.randomText(random, 60);
      ShmArena.Info info = ShmMessages.decodeInfo(ShmMessages.encode(new ShmArena.Info(dir, token)));
      assertEquals(dir, info.directory());
      assertArrayEquals(token, info.token());

      long key = random.nextLong();
      assertEquals(key, decodeOpen(ShmMessages.open(key)));
      ByteBuffer hello = ShmMessages.hello();
      assertEquals(ShmMessages.HELLO, ShmMessages.operation(hello));
      assertEquals(0, hello.remaining());

      ShmArena.Location region = new ShmArena.Location(dir + "/r", random.nextLong() & Long.MAX_VALUE,
          random.nextLong() & Long.MAX_VALUE, random.nextInt(Integer.MAX_VALUE));
      assertEquals(region, ShmMessages.decodeLocation(ShmMessages.encode(region)));
    }
  }

  @Test
  void unknownAndEmptyRequestsAreRejected() {
    assertThrows(ProtocolException.class, () -> ShmMessages.operation(ByteBuffer.allocate(0)));
    assertThrows(ProtocolException.class, () -> ShmMessages.operation(ByteBuffer.wrap(new byte[] {3})));
    assertThrows(ProtocolException.class, () -> ShmMessages.operation(ByteBuffer.wrap(new byte[] {0})));
  }

  @Test
  void truncatedExtendedAndMutatedPayloadsOnlyRaiseProtocolException() {
    Random random = new Random(SEED + 1);
    for (FrameFuzzing.Codec codec : codecs()) {
      FrameFuzzing.fuzzPayloads(codec, random, PAYLOAD_ITERATIONS);
    }
  }
}
