package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.math.BigInteger;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Both implementations of the handshake's curves: the RFCs' vectors, and each against the other. */
class CurvesTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final SecureRandom RANDOM = new SecureRandom();

  static List<Curves> implementations() {
    List<Curves> all = new ArrayList<>(List.of(Curves.JDK));
    Curves.openSsl().ifPresent(all::add);
    return all;
  }

  /** OpenSSL's, which every build that carries libsluice-crypto.so on a host with libcrypto has. */
  private static Curves openSsl() {
    Optional<Curves> o = Curves.openSsl();
    assumeTrue(o.isPresent(), () -> "OpenSSL's curves are unavailable here: " + OpenSslCurves.unavailabilityCause());
    return o.get();
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void passesItsSelfCheck(Curves curves) {
    assertEquals(Optional.empty(), curves.selfCheck());
  }

  @Test
  void theJvmUsesOpenSslWhereItLoadsUnlessToldOtherwise() {
    String asked = System.getProperty(Curves.PROPERTY, "auto");
    if (asked.equals("jdk") || Curves.openSsl().isEmpty()) {
      assertEquals(Curves.JDK, Curves.chosen());
    } else {
      assertEquals("openssl", Curves.chosen().id());
    }
    assertTrue(Curves.description().startsWith(Curves.chosen().id() + " ("), Curves.description());
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void x25519MatchesRfc7748Section5Iteration(Curves curves) {
    // RFC 7748 section 5.2: X25519(k, u) with k = u = 9, once.
    byte[] nine = new byte[32];
    nine[0] = 9;
    assertEquals("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079",
        HEX.formatHex(curves.x25519(nine, nine)));
    // RFC 7748 section 5.2, the first scalar and u-coordinate.
    assertEquals("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        HEX.formatHex(curves.x25519(HEX.parseHex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"),
            HEX.parseHex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"))));
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void refusesEveryPointOfSmallOrderAndReducesNonCanonicalOnes(Curves curves) {
    byte[] scalar = randomKey();
    BigInteger p = BigInteger.TWO.pow(255).subtract(BigInteger.valueOf(19));
    for (String u : new String[] {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p - 1
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // p, that is 0
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"}) { // p + 1, that is 1
      assertNull(curves.x25519(scalar, HEX.parseHex(u)), u);
    }
    // u + p names the same point as u (RFC 7748 section 5: non-canonical values are reduced).
    byte[] peer = curves.x25519Public(randomKey());
    byte[] shifted = X25519.encode(X25519.decode(peer).add(p));
    if (shifted[31] >= 0) { // still below 2^255
      assertArrayEquals(curves.x25519(scalar, peer), curves.x25519(scalar, shifted));
    }
  }

  @Test
  void bothImplementationsAgreeOnFreshKeys() {
    Curves ossl = openSsl();
    for (int i = 0; i < 20; i++) {
      byte[] a = randomKey();
      byte[] b = randomKey();
      assertArrayEquals(Curves.JDK.x25519Public(a), ossl.x25519Public(a));
      byte[] shared = ossl.x25519(a, Curves.JDK.x25519Public(b));
      assertNotNull(shared);
      assertArrayEquals(shared, Curves.JDK.x25519(b, ossl.x25519Public(a)));
      byte[] highBit = ossl.x25519Public(b);
      highBit[31] |= (byte) 0x80;
      assertArrayEquals(shared, ossl.x25519(a, highBit), "the top bit of u is masked");
      assertArrayEquals(shared, Curves.JDK.x25519(a, highBit), "the top bit of u is masked");

      byte[] seed = randomKey();
      byte[] message = new byte[i * 7];
      RANDOM.nextBytes(message);
      assertArrayEquals(Curves.JDK.ed25519Public(seed), ossl.ed25519Public(seed));
      byte[] signature = ossl.ed25519Sign(seed, message);
      assertArrayEquals(Curves.JDK.ed25519Sign(seed, message), signature, "Ed25519 is deterministic");
      assertTrue(Curves.JDK.ed25519Verify(ossl.ed25519Public(seed), message, signature));
      assertTrue(ossl.ed25519Verify(Curves.JDK.ed25519Public(seed), message, signature));
    }
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void verificationRefusesWhatIsNotTheSignersSignature(Curves curves) {
    byte[] seed = randomKey();
    byte[] key = curves.ed25519Public(seed);
    byte[] message = "the transcript".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] signature = curves.ed25519Sign(seed, message);
    assertTrue(curves.ed25519Verify(key, message, signature));
    for (int bit : new int[] {0, 255, 256, 511}) {
      byte[] altered = signature.clone();
      altered[bit / 8] ^= (byte) (1 << (bit % 8));
      assertFalse(curves.ed25519Verify(key, message, altered), "signature bit " + bit);
    }
    byte[] otherMessage = message.clone();
    otherMessage[0] ^= 1;
    assertFalse(curves.ed25519Verify(key, otherMessage, signature));
    assertFalse(curves.ed25519Verify(curves.ed25519Public(randomKey()), message, signature), "another key");
    // S + L: the same S modulo L, refused as non-canonical (RFC 8032 section 5.1.7).
    BigInteger l = BigInteger.TWO.pow(252).add(new BigInteger("27742317777372353535851937790883648493"));
    byte[] sPlusL = signature.clone();
    byte[] s = X25519.encode(X25519.decode(java.util.Arrays.copyOfRange(signature, 32, 64)).add(l));
    System.arraycopy(s, 0, sPlusL, 32, 32);
    assertFalse(curves.ed25519Verify(key, message, sPlusL), "S + L");
    assertFalse(curves.ed25519Verify(new byte[31], message, signature), "a short key");
    assertFalse(curves.ed25519Verify(key, message, new byte[63]), "a short signature");
    // y = 2 is no point of the curve (x² = 3 / (2·(d·4 + 1))... is not a square).
    byte[] noPoint = new byte[32];
    noPoint[0] = 2;
    assertFalse(curves.ed25519Verify(noPoint, message, signature), "a key that is no point");
  }

  @ParameterizedTest
  @MethodSource("implementations")
  void refusesKeysOfTheWrongLength(Curves curves) {
    assertThrows(IllegalArgumentException.class, () -> curves.x25519Public(new byte[31]));
    assertThrows(IllegalArgumentException.class, () -> curves.x25519(new byte[32], new byte[33]));
    assertThrows(IllegalArgumentException.class, () -> curves.ed25519Public(new byte[64]));
    assertThrows(IllegalArgumentException.class, () -> curves.ed25519Sign(new byte[31], new byte[0]));
  }

  private static byte[] randomKey() {
    byte[] k = new byte[32];
    RANDOM.nextBytes(k);
    return k;
  }
}
