package io.sluice.transport.spi;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.Connection;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportOption;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The handshake's key is a salted, slow derivation of the secret, never the secret itself. */
class HandshakeKeyTest {
  private static final Handshake.Transcript TRANSCRIPT = new Handshake.Transcript(
      new byte[Frames.NONCE_LENGTH], new byte[Frames.NONCE_LENGTH], 1, 2, 0, 0,
      new byte[NodeIdentity.PUBLIC_KEY_LENGTH], new byte[NodeIdentity.PUBLIC_KEY_LENGTH]);
  private final EchoPeers peers = new EchoPeers();

  @AfterEach
  void close() {
    peers.close();
  }

  @Test
  void proofsAreNotKeyedWithTheSecretItself() throws Exception {
    Mac raw = Mac.getInstance("HmacSHA256");
    raw.init(new SecretKeySpec("weak".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    raw.update("sluice/server".getBytes(StandardCharsets.US_ASCII));
    raw.update(TRANSCRIPT.bytes());
    assertFalse(Arrays.equals(raw.doFinal(), new Handshake("weak").serverProof(TRANSCRIPT)),
        "one HMAC with the bare secret reproduces the proof, so guessing it costs nothing");
  }

  @Test
  void theSaltChangesTheKey() {
    assertArrayEquals(new Handshake("s", "a").serverProof(TRANSCRIPT), new Handshake("s", "a").serverProof(TRANSCRIPT));
    assertFalse(Arrays.equals(new Handshake("s", "a").serverProof(TRANSCRIPT),
        new Handshake("s", "b").serverProof(TRANSCRIPT)));
  }

  @Test
  void peersWithAnotherSaltDoNotAuthenticate() throws Exception {
    Transport server = peers.open(false, Map.of(TransportOption.SECRET_SALT.key(), "deployment-a"));
    Transport same = peers.open(false, Map.of(TransportOption.SECRET_SALT.key(), "deployment-a"));
    Transport other = peers.open(false, Map.of(TransportOption.SECRET_SALT.key(), "deployment-b"));
    try (Connection c = await(same.connect(server.localAddress()))) {
      assertEquals("ok:in", text(await(c.request(message("in")))));
    }
    assertFailsWith(AuthenticationFailedException.class, other.connect(server.localAddress()));
  }
}
