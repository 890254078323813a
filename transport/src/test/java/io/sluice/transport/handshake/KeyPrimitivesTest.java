package io.sluice.transport.handshake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.crypto.Hkdf;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.X25519;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The handshake's primitives against their RFCs' own test vectors: HKDF (5869), X25519 (7748), Ed25519 (8032). */
class KeyPrimitivesTest {
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void hkdfMatchesRfc5869TestCase1() {
    byte[] prk = Hkdf.extract(HEX.parseHex("000102030405060708090a0b0c"),
        HEX.parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"));
    assertEquals("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5", HEX.formatHex(prk));
    assertEquals("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
        HEX.formatHex(Hkdf.expand(prk, HEX.parseHex("f0f1f2f3f4f5f6f7f8f9"), 42)));
  }

  @Test
  void x25519MatchesRfc7748Section6() throws AuthenticationFailedException {
    X25519.KeyPair alice = X25519.fromPrivate(
        HEX.parseHex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"));
    X25519.KeyPair bob = X25519.fromPrivate(
        HEX.parseHex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"));
    assertEquals("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a", HEX.formatHex(alice.publicKey()));
    assertEquals("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f", HEX.formatHex(bob.publicKey()));
    String shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
    assertEquals(shared, HEX.formatHex(X25519.agree(alice.privateKey(), bob.publicKey())));
    assertEquals(shared, HEX.formatHex(X25519.agree(bob.privateKey(), alice.publicKey())));
    // The top bit of a received u-coordinate is masked: setting it changes nothing.
    byte[] highBit = bob.publicKey();
    highBit[31] |= (byte) 0x80;
    assertEquals(shared, HEX.formatHex(X25519.agree(alice.privateKey(), highBit)));
  }

  @Test
  void x25519RefusesPointsOfSmallOrder() {
    X25519.KeyPair own = Ephemerals.SECURE.keyPair();
    for (String u : new String[] {
        "0000000000000000000000000000000000000000000000000000000000000000",
        "0100000000000000000000000000000000000000000000000000000000000000",
        "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"}) {
      assertThrows(AuthenticationFailedException.class, () -> X25519.agree(own.privateKey(), HEX.parseHex(u)), u);
    }
  }

  @Test
  void ed25519FromSeedMatchesRfc8032Test1() {
    NodeIdentity id = NodeIdentity.fromSeed(
        HEX.parseHex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"));
    assertEquals("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", HEX.formatHex(id.publicKey()));
    // RFC 8032 signs the empty message; ours prefix a label, so sign "" under the empty label.
    assertArrayEquals(HEX.parseHex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"), id.sign("", new byte[0]));
  }
}
