package io.sluice.transport.handshake;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.SecretKeys;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.carrier.Settings;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.wire.Frames;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the keys of a connection depend on: the secret and the ephemeral Diffie-Hellman secret,
 * never the secret and public values alone; what the server sends before the client proved
 * anything does not depend on the secret; short secrets are refused up front.
 */
class HandshakeKeyTest {
  private static final String SECRET = TransportTestSupport.SECRET;
  private final NodeIdentity clientNode = NodeIdentity.generate();
  private final NodeIdentity serverNode = NodeIdentity.generate();

  /** Both halves of one handshake, run in memory. */
  private record Run(Handshake.Client client, Handshake.Server server, byte[] auth) {}

  private Run run(Handshake clientSide, Handshake serverSide, int flags) throws Exception {
    Handshake.Client client = clientSide.client(clientNode, flags);
    Handshake.Server server = serverSide.server(serverNode, 0, Frames.Hello.decode(client.hello()));
    ByteBuffer auth = client.auth(server.challenge());
    Frames.Auth a = Frames.Auth.decode(auth.duplicate());
    server.checkFinished(a);
    client.checkAuthOk(Frames.AuthOk.decode(server.authOk(a)));
    byte[] bytes = new byte[auth.remaining()];
    auth.get(bytes);
    return new Run(client, server, bytes);
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }

  @Test
  void bothSidesDeriveTheSameKeysInEitherMode() throws Exception {
    for (int flags : new int[] {0, Handshake.FLAG_ENCRYPT}) {
      Run r = run(new Handshake(SECRET), new Handshake(SECRET), flags);
      SessionKeys c = r.client().keys().sessionKeys();
      SessionKeys s = r.server().keys().sessionKeys();
      assertArrayEquals(c.clientToServerSecret(), s.clientToServerSecret());
      assertArrayEquals(c.serverToClientSecret(), s.serverToClientSecret());
      assertEquals(flags != 0, c.encrypted());
      assertEquals(32, c.clientToServerSecret().length, "a direction's secret, whatever the mode");
      assertEquals(flags != 0 ? 16 : 32, KeySchedule.recordKey(c.clientToServerSecret(), c.encrypted()).length,
          "AES-128 keys in aead mode, HMAC keys in mac");
      assertFalse(Arrays.equals(c.clientToServerSecret(), c.serverToClientSecret()), "the directions share a secret");
    }
  }

  /** (b) Nothing in CHALLENGE depends on the secret: connecting gives no value to test guesses against. */
  @Test
  void theChallengeIsTheSameWhateverTheServersSecret() throws Exception {
    Frames.Hello hello = Frames.Hello.decode(new Handshake(SECRET).client(clientNode, 0).hello());
    byte[] one = bytes(new Handshake(SECRET, FixedEphemerals.counting(1)).server(serverNode, 0, hello).challenge());
    byte[] other = bytes(new Handshake("an entirely different secret", FixedEphemerals.counting(1))
        .server(serverNode, 0, hello).challenge());
    assertArrayEquals(one, other, "the CHALLENGE reveals something of the server's secret");
    assertEquals(Frames.Challenge.LENGTH, one.length);
  }

  /** (c) Two connections under one secret get unrelated keys. */
  @Test
  void everyConnectionHasItsOwnKeys() throws Exception {
    Handshake hs = new Handshake(SECRET);
    KeySchedule first = run(hs, hs, 0).client().keys();
    KeySchedule second = run(hs, hs, 0).client().keys();
    assertFalse(Arrays.equals(first.dh(), second.dh()));
    assertFalse(Arrays.equals(first.clientToServerSecret(), second.clientToServerSecret()));
    assertFalse(Arrays.equals(first.serverToClientSecret(), second.serverToClientSecret()));
    assertFalse(Arrays.equals(first.clientFinishedKey(), second.clientFinishedKey()));
  }

  /**
   * (c) Forward secrecy's shape: whoever holds the secret and the recorded transcript (HELLO,
   * CHALLENGE, AUTH: every public value) but neither ephemeral private key cannot rebuild the keys.
   * The keys come out of the schedule only with the right dh, and any other input in its place
   * gives other keys.
   */
  @Test
  void theKeysAreAFunctionOfTheDiffieHellmanSecret() throws Exception {
    Run r = run(new Handshake(SECRET), new Handshake(SECRET), 0);
    KeySchedule real = r.client().keys();
    byte[] psk = SecretKeys.psk(SECRET);
    byte[] hello = bytes(r.client().hello());
    byte[] challenge = bytes(r.server().challenge());
    byte[] th = KeySchedule.transcriptHash(hello, challenge);
    assertArrayEquals(real.transcriptHash(), th, "th is public: anyone who recorded the handshake has it");

    KeySchedule rebuilt = KeySchedule.derive(psk, real.dh(), th, false);
    assertArrayEquals(real.clientToServerSecret(), rebuilt.clientToServerSecret(), "with dh, the schedule gives the keys");

    Frames.Hello h = Frames.Hello.decode(ByteBuffer.wrap(hello));
    Frames.Challenge c = Frames.Challenge.decode(ByteBuffer.wrap(challenge));
    byte[] xor = new byte[32];
    for (int i = 0; i < 32; i++) {
      xor[i] = (byte) (h.ephemeralKey()[i] ^ c.ephemeralKey()[i]);
    }
    List<byte[]> publicGuesses = new ArrayList<>(List.of(new byte[32], h.ephemeralKey(), c.ephemeralKey(), xor, th,
        psk, h.nonce(), c.nonce(), r.auth()));
    for (byte[] guess : publicGuesses) {
      KeySchedule k = KeySchedule.derive(psk, guess, th, false);
      assertFalse(Arrays.equals(real.clientToServerSecret(), k.clientToServerSecret()), "c2s from public values");
      assertFalse(Arrays.equals(real.serverToClientSecret(), k.serverToClientSecret()), "s2c from public values");
      assertFalse(Arrays.equals(real.clientFinishedKey(), k.clientFinishedKey()), "finished key from public values");
    }
    // One bit of dh changes every key.
    byte[] flipped = real.dh().clone();
    flipped[0] ^= 1;
    KeySchedule k = KeySchedule.derive(psk, flipped, th, false);
    assertFalse(Arrays.equals(real.clientToServerSecret(), k.clientToServerSecret()));
    assertFalse(Arrays.equals(real.serverToClientSecret(), k.serverToClientSecret()));
  }

  /** (f) A secret of 15 bytes is refused wherever it enters, naming the key and never the value. */
  @Test
  void aSecretShorterThan16BytesIsRefused() {
    String fifteen = "fifteen-bytes!!";
    assertEquals(15, fifteen.length());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Handshake(fifteen));
    assertTrue(e.getMessage().contains("sluice.transport.secret"), e.getMessage());
    assertTrue(e.getMessage().contains("16 bytes"), e.getMessage());
    assertFalse(e.getMessage().contains(fifteen), "the error shows the secret");

    Map<String, String> config = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    config.put(TransportKeys.SECRET.key(), fifteen);
    e = assertThrows(IllegalArgumentException.class, () -> Settings.from(TransportConfig.of(config)));
    assertTrue(e.getMessage().contains("sluice.transport.secret"), e.getMessage());
    assertFalse(e.getMessage().contains(fifteen), "the error shows the secret: " + e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TransportKeys.validate(TransportConfig.of(config)));

    // Bytes count, not characters: seven two-byte characters are 14 bytes.
    assertThrows(IllegalArgumentException.class, () -> new Handshake("ééééééé"));
    new Handshake("éééééééé");
    new Handshake("sixteen-bytes!!!");
    assertThrows(IllegalArgumentException.class, () -> new Handshake(""));
    assertEquals("", TransportKeys.SECRET.parse(""), "an empty secret still means none where that is allowed");
  }
}
