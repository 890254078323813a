package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import javax.crypto.AEADBadTagException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Both AES-GCM engines against each other: what one seals the other opens, byte for byte the same
 * records, from direct and heap buffers and in pieces; an altered record, tag, header or number
 * fails authentication under both and leaves no plain text; both make the same GMACs and check
 * each other's; and the choice at open falls back to the JDK's engine, never to no encryption.
 * OpenSSL's engine is skipped, saying why, where its library does not load.
 */
class AesGcmEngineTest {
  private static final int[] LENGTHS = {0, 1, 15, 16, 17, 1000, 64 * 1024};

  static Stream<Arguments> pairs() {
    List<Arguments> out = new ArrayList<>();
    for (AesGcmEngine sealer : AesGcmEngine.values()) {
      for (AesGcmEngine opener : AesGcmEngine.values()) {
        for (boolean direct : new boolean[] {true, false}) {
          out.add(Arguments.of(sealer, opener, direct));
        }
      }
    }
    return out.stream();
  }

  private static void assumeAvailable(AesGcmEngine... engines) {
    for (AesGcmEngine e : engines) {
      assumeTrue(e.unavailabilityCause().isEmpty(), () -> e + " unavailable: " + e.unavailabilityCause().get());
    }
  }

  private static ByteBuffer buffer(int n, boolean direct) {
    return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Seals {@code plain} as one record, in three pieces when it is long enough. */
  private static ByteBuffer seal(AesGcmEngine engine, byte[] key, long seq, byte[] aad, byte[] plain, boolean direct) {
    AesGcm sealer = engine.sealer(key);
    ByteBuffer in = buffer(plain.length, direct).put(plain).flip();
    ByteBuffer out = buffer(plain.length + AesGcm.TAG_LENGTH, direct);
    sealer.startSeal(seq, ByteBuffer.wrap(aad));
    int a = plain.length / 3;
    int b = 2 * plain.length / 3;
    sealer.seal(in.slice(0, a), out);
    sealer.seal(in.slice(a, b - a), out);
    sealer.finishSeal(in.slice(b, plain.length - b), out);
    assertEquals(out.capacity(), out.position(), "ciphertext and tag fill the record");
    return out.flip();
  }

  @ParameterizedTest(name = "{0} seals, {1} opens, direct={2}")
  @MethodSource("pairs")
  void whatOneEngineSealsTheOtherOpens(AesGcmEngine sealing, AesGcmEngine opening, boolean direct) throws Exception {
    assumeAvailable(sealing, opening);
    byte[] key = random(16, 1);
    byte[] aad = random(16, 2);
    for (int n : LENGTHS) {
      byte[] plain = random(n, n);
      ByteBuffer sealed = seal(sealing, key, n + 7L, aad, plain, direct);
      assertEquals(seal(AesGcmEngine.JDK, key, n + 7L, aad, plain, false), sealed.duplicate(),
          "the same record as the JDK's, " + n + " bytes");
      ByteBuffer dst = buffer(n, direct);
      opening.opener(key).open(n + 7L, ByteBuffer.wrap(aad), sealed, dst);
      assertEquals(ByteBuffer.wrap(plain), dst.flip(), n + " bytes");
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void anAlteredRecordFailsAuthenticationAndLeavesNoPlainText(AesGcmEngine engine) {
    assumeAvailable(engine);
    byte[] key = random(16, 3);
    byte[] aad = random(16, 4);
    byte[] plain = random(4096, 5);
    ByteBuffer sealed = seal(engine, key, 9, aad, plain, true);
    List<String> cases = List.of("ciphertext", "tag", "header", "sequence number", "key");
    for (String what : cases) {
      ByteBuffer record = ByteBuffer.allocateDirect(sealed.remaining()).put(sealed.duplicate()).flip();
      byte[] header = aad.clone();
      long seq = 9;
      byte[] openKey = key;
      switch (what) {
        case "ciphertext" -> record.put(100, (byte) (record.get(100) ^ 0x01));
        case "tag" -> record.put(record.limit() - 3, (byte) (record.get(record.limit() - 3) ^ 0x80));
        case "header" -> header[0] ^= 1;
        case "sequence number" -> seq = 10;
        default -> openKey = random(16, 6);
      }
      ByteBuffer dst = ByteBuffer.allocateDirect(plain.length);
      AesGcm opener = engine.opener(openKey);
      long s = seq;
      assertThrows(AEADBadTagException.class, () -> opener.open(s, ByteBuffer.wrap(header), record, dst), what);
      assertEquals(ByteBuffer.allocateDirect(plain.length), dst.clear(), what + ": no plain text left behind");
    }
  }

  /** The GMAC of {@code data} after a 16-byte header, by {@code engine}, the data given in three pieces. */
  private static ByteBuffer gmac(AesGcmEngine engine, byte[] key, long seq, byte[] header, byte[] data, boolean direct) {
    AesGcm sealer = engine.sealer(key);
    ByteBuffer in = buffer(data.length, direct).put(data).flip();
    sealer.startMac(seq);
    sealer.macMore(ByteBuffer.wrap(header));
    int a = data.length / 3;
    int b = 2 * data.length / 3;
    sealer.macMore(in.slice(0, a));
    sealer.macMore(in.slice(a, b - a));
    sealer.macMore(in.slice(b, data.length - b));
    ByteBuffer tag = ByteBuffer.allocate(AesGcm.TAG_LENGTH);
    sealer.finishMac(tag);
    return tag.flip();
  }

  /** Checks {@code tag} as the GMAC of {@code data} after {@code header}, the data given whole. */
  private static void checkGmac(AesGcmEngine engine, byte[] key, long seq, byte[] header, byte[] data, boolean direct,
      ByteBuffer tag) throws AEADBadTagException {
    checkGmac(engine.opener(key), seq, header, buffer(data.length, direct).put(data).flip(), tag);
  }

  /** Checks {@code tag} with {@code opener} as the GMAC of {@code data} after {@code header}. */
  private static void checkGmac(AesGcm opener, long seq, byte[] header, ByteBuffer data, ByteBuffer tag)
      throws AEADBadTagException {
    opener.startMac(seq);
    opener.macMore(ByteBuffer.wrap(header));
    opener.macMore(data);
    opener.checkMac(tag.duplicate());
  }

  /**
   * A GMAC's key, header and {@code n} bytes of data, random from {@code seed} on, for a test of
   * {@code engine}, which is skipped where the engine is unavailable.
   */
  private record MacInput(byte[] key, byte[] header, byte[] data) {
    static MacInput of(AesGcmEngine engine, int n, long seed) {
      assumeAvailable(engine);
      return new MacInput(random(16, seed), random(16, seed + 1), random(n, seed + 2));
    }
  }

  @ParameterizedTest(name = "{0} makes, {1} checks, direct={2}")
  @MethodSource("pairs")
  void bothEnginesMakeTheSameGmacAndCheckEachOthers(AesGcmEngine making, AesGcmEngine checking, boolean direct)
      throws Exception {
    assumeAvailable(making, checking);
    byte[] key = random(16, 7);
    byte[] header = random(16, 8);
    for (int n : new int[] {0, 1, 15, 16, 17, 1000, 64 * 1024, (1 << 20) + 3}) {
      byte[] data = random(n, n + 1);
      ByteBuffer tag = gmac(making, key, n + 11L, header, data, direct);
      assertEquals(gmac(AesGcmEngine.JDK, key, n + 11L, header, data, false), tag, "the JDK's GMAC, " + n + " bytes");
      checkGmac(checking, key, n + 11L, header, data, direct, tag);
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void aGmacFailsForAlteredDataHeaderNumberOrKey(AesGcmEngine engine) throws Exception {
    MacInput in = MacInput.of(engine, 4096, 9);
    byte[] key = in.key();
    byte[] header = in.header();
    byte[] data = in.data();
    ByteBuffer tag = gmac(engine, key, 5, header, data, true);
    checkGmac(engine, key, 5, header, data, true, tag);
    for (String what : List.of("data", "header", "sequence number", "key", "tag")) {
      byte[] d = data.clone();
      byte[] h = header.clone();
      long seq = 5;
      byte[] k = key;
      ByteBuffer t = ByteBuffer.allocate(AesGcm.TAG_LENGTH).put(tag.duplicate()).flip();
      switch (what) {
        case "data" -> d[4095] ^= 1;
        case "header" -> h[8] ^= 0x40;
        case "sequence number" -> seq = 6;
        case "key" -> k = random(16, 12);
        default -> t.put(0, (byte) (t.get(0) ^ 0x80));
      }
      long s = seq;
      byte[] checkKey = k;
      assertThrows(AEADBadTagException.class, () -> checkGmac(engine, checkKey, s, h, d, true, t), what);
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void anAbandonedGmacLeavesTheEngineUsable(AesGcmEngine engine) throws Exception {
    MacInput in = MacInput.of(engine, 1000, 13);
    AesGcm opener = engine.opener(in.key());
    opener.startMac(1);
    opener.macMore(ByteBuffer.wrap(in.header()));
    opener.abandon();
    opener.abandon(); // twice is harmless: a connection may close after its check ended
    ByteBuffer tag = gmac(engine, in.key(), 2, in.header(), in.data(), true);
    checkGmac(opener, 2, in.header(), ByteBuffer.wrap(in.data()), tag);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void everyAvailableEnginePassesItsSelfCheck(AesGcmEngine engine) {
    assumeAvailable(engine);
    assertEquals(Optional.empty(), engine.selfCheck());
  }

  @Test
  void anEngineFailingItsSelfCheckFallsBackToTheJdks() {
    EngineChoice c = EngineChoice.choose(EngineChoice.AUTO, "",
        e -> e == AesGcmEngine.OPENSSL ? Optional.of("sealed a known record wrongly") : Optional.empty());
    assertEquals(AesGcmEngine.JDK, c.engine());
    assertTrue(c.reason().contains("sealed a known record wrongly"), c.reason());
  }

  @Test
  void openSslAskedForAndUnusableFailsTheOpen() {
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> EngineChoice.choose(EngineChoice.OPENSSL, "",
        x -> Optional.of("no libcrypto")));
    assertTrue(e.getMessage().contains("no libcrypto"), e.getMessage());
  }

  @Test
  void theMetricsNameEveryEngine() {
    List<String> ids = new ArrayList<>();
    for (AesGcmEngine e : AesGcmEngine.values()) {
      ids.add(e.id());
    }
    assertEquals(ids, io.sluice.transport.metrics.TransportMetrics.ENGINES);
  }

  @Test
  void theSystemPropertyDecidesUnderAutoOnly() {
    assertEquals(AesGcmEngine.JDK, EngineChoice.choose(EngineChoice.AUTO, "jdk", e -> Optional.empty()).engine());
    assertEquals(AesGcmEngine.OPENSSL,
        EngineChoice.choose(EngineChoice.OPENSSL, "jdk", e -> Optional.empty()).engine());
    assertThrows(IllegalArgumentException.class, () -> EngineChoice.choose(EngineChoice.AUTO, "fast", e -> Optional.empty()));
  }

  @Test
  void autoTakesOpenSslWhereItLoadsAndTheJdkWhenAskedFor() {
    assumeTrue(System.getProperty(EngineChoice.PROPERTY, "").isEmpty(), "the engine is forced for this run");
    assumeAvailable(AesGcmEngine.OPENSSL);
    assertEquals(AesGcmEngine.OPENSSL, EngineChoice.choose(EngineChoice.AUTO).engine());
    assertEquals(AesGcmEngine.JDK, EngineChoice.choose(EngineChoice.JDK).engine());
    assertThrows(IllegalArgumentException.class, () -> EngineChoice.choose("fast"));
  }
}
