package io.sluice.transport.handshake;

import static io.sluice.transport.handshake.ProtocolVectors.HEX;
import static io.sluice.transport.handshake.ProtocolVectors.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.SessionKeys;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.RecordLayer;
import io.sluice.transport.wire.SequenceNumbers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * docs/protocol-vectors.json against this implementation: from the file's inputs the real
 * handshake and record layer reproduce every value in it, and the record layer opens every frame
 * in it with the peer's keys. A second check recomputes the values from the formulas of
 * docs/protocol.md with nothing but the JDK's SHA-256, HMAC and AES-GCM, as another implementation
 * would, so the document, the file and the code agree.
 */
class HandshakeVectorsTest {
  private final Map<String, String> file;

  HandshakeVectorsTest() throws Exception {
    file = ProtocolVectors.read(ProtocolVectors.file());
  }

  @ParameterizedTest(name = "engine={0}")
  @EnumSource(AesGcmEngine.class)
  void theImplementationReproducesEveryValue(AesGcmEngine engine) throws Exception {
    assumeTrue(engine.unavailabilityCause().isEmpty(), () -> engine + " unavailable: " + engine.unavailabilityCause());
    Map<String, String> computed = ProtocolVectors.compute(file, engine);
    assertEquals(computed.keySet(), file.keySet(), "the file names other values than the generator");
    for (Map.Entry<String, String> e : computed.entrySet()) {
      assertEquals(e.getValue(), file.get(e.getKey()), e.getKey());
    }
  }

  @ParameterizedTest(name = "engine={0}")
  @EnumSource(AesGcmEngine.class)
  void thePeersRecordLayerOpensEveryFrame(AesGcmEngine engine) throws Exception {
    assumeTrue(engine.unavailabilityCause().isEmpty(), () -> engine + " unavailable: " + engine.unavailabilityCause());
    for (String mode : new String[] {"mac", "aead"}) {
      String p = mode + ".";
      SessionKeys keys = new SessionKeys(bytes(file, p + "c2s_secret"), bytes(file, p + "s2c_secret"), mode.equals("aead"));
      RecordLayer.Opener client = RecordLayer.clientOpener(keys, engine);
      RecordLayer.Opener server = RecordLayer.serverOpener(keys, engine);
      assertOpens(client, bytes(file, p + "auth_ok_frame"), bytes(file, p + "auth_ok"), p + "auth_ok_frame");
      assertOpens(server, bytes(file, p + "read_request_frame"), bytes(file, "read_request"), p + "read_request_frame");
      assertOpens(client, bytes(file, p + "read_response_frame"), bytes(file, "read_response"), p + "read_response_frame");
      SequenceNumbers.skipTo(server, RecordLayer.EPOCH_LENGTH);
      assertOpens(server, bytes(file, p + "read_request_frame_1"), bytes(file, "read_request"),
          p + "read_request_frame_1");
    }
  }

  /** Opens a whole frame of one record with {@code opener} and compares its payload. */
  private static void assertOpens(RecordLayer.Opener opener, byte[] frame, byte[] payload, String what)
      throws Exception {
    FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(frame), Integer.MAX_VALUE);
    ByteBuffer tag = ByteBuffer.wrap(frame, FrameHeader.LENGTH, RecordLayer.TAG_LENGTH).slice();
    ByteBuffer body = ByteBuffer.wrap(frame, FrameHeader.LENGTH + RecordLayer.TAG_LENGTH, h.payloadLength()).slice();
    assertEquals(ByteBuffer.wrap(payload), opener.open(h, tag, body), what);
  }

  @Test
  void theDocumentsFormulasGiveTheSameValues() throws Exception {
    byte[] secret = bytes(file, "secret");
    // Protocol 7 keeps protocol 6's salt for psk (docs/protocol.md, 2.3).
    byte[] psk = hmac("sluice/6/psk".getBytes(StandardCharsets.US_ASCII), secret);
    assertArrayEquals(bytes(file, "psk"), psk, "psk = HMAC-SHA256(\"sluice/6/psk\", secret)");
    for (String mode : new String[] {"mac", "aead"}) {
      String p = mode + ".";
      byte[] hello = bytes(file, p + "hello");
      byte[] challenge = bytes(file, p + "challenge");
      assertEquals(107, hello.length);
      assertEquals(7, ByteBuffer.wrap(hello).getShort());
      assertEquals(7, ByteBuffer.wrap(challenge).getShort());
      assertEquals(file.get("client_node_id"), HEX.formatHex(hello, 2, 10));
      assertEquals(file.get(p + "client_flags"), HEX.formatHex(hello, 10, 11));
      assertEquals(file.get("client_nonce"), HEX.formatHex(hello, 11, 43));
      assertEquals(file.get("client_ephemeral_public"), HEX.formatHex(hello, 43, 75));
      assertEquals(file.get("client_identity_public"), HEX.formatHex(hello, 75, 107));
      assertEquals(file.get("server_ephemeral_public"), HEX.formatHex(challenge, 43, 75));

      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update("sluice/7 transcript".getBytes(StandardCharsets.US_ASCII));
      sha.update(ByteBuffer.allocate(4).putInt(hello.length).array());
      sha.update(hello);
      sha.update(ByteBuffer.allocate(4).putInt(challenge.length).array());
      sha.update(challenge);
      byte[] th = sha.digest();
      assertArrayEquals(bytes(file, p + "th"), th, p + "th");

      byte[] hs = hmac(psk, bytes(file, "dh"));
      assertArrayEquals(bytes(file, p + "hs"), hs, p + "hs = HMAC-SHA256(psk, dh)");
      boolean encrypted = ((hello[10] | challenge[10]) & 1) != 0;
      int recordKey = encrypted ? 16 : 32;
      byte[] finishedKey = expandOnce(hs, "sluice/7 client finished", th, 32);
      byte[] c2sSecret = expandOnce(hs, "sluice/7 c2s", th, 32);
      byte[] s2cSecret = expandOnce(hs, "sluice/7 s2c", th, 32);
      assertArrayEquals(bytes(file, p + "client_finished_key"), finishedKey);
      assertArrayEquals(bytes(file, p + "c2s_secret"), c2sSecret, p + "c2s_secret");
      assertArrayEquals(bytes(file, p + "s2c_secret"), s2cSecret, p + "s2c_secret");
      byte[] c2s = expandOnce(c2sSecret, "sluice/7 key", NOTHING, recordKey);
      byte[] s2c = expandOnce(s2cSecret, "sluice/7 key", NOTHING, recordKey);
      assertArrayEquals(bytes(file, p + "c2s_key"), c2s, p + "c2s_key of epoch 0");
      assertArrayEquals(bytes(file, p + "s2c_key"), s2c, p + "s2c_key of epoch 0");
      // mac mode tags READ_RESPONSE with a GMAC under the body key; aead mode has no body key.
      byte[] s2cBody = encrypted ? s2c : expandOnce(s2cSecret, "sluice/7 body", NOTHING, 16);
      assertEquals(!encrypted, file.containsKey(p + "s2c_body_key"), p + "s2c_body_key in mac mode only");
      if (!encrypted) {
        assertArrayEquals(bytes(file, p + "s2c_body_key"), s2cBody, p + "s2c_body_key of epoch 0");
      }
      byte[] c2sSecret1 = expandOnce(c2sSecret, "sluice/7 next", NOTHING, 32);
      byte[] c2s1 = expandOnce(c2sSecret1, "sluice/7 key", NOTHING, recordKey);
      assertArrayEquals(bytes(file, p + "c2s_secret_1"), c2sSecret1, p + "c2s_secret_1");
      assertArrayEquals(bytes(file, p + "c2s_key_1"), c2s1, p + "c2s_key_1");
      byte[] finished = hmac(finishedKey, th);
      assertArrayEquals(bytes(file, p + "client_finished"), finished);

      byte[] auth = bytes(file, p + "auth");
      assertArrayEquals(finished, Arrays.copyOf(auth, 32), "AUTH starts with the finished value");
      assertTrue(NodeIdentity.verifies(bytes(file, "client_identity_public"), "sluice/7 client signature", th,
          Arrays.copyOfRange(auth, 32, 96)), "AUTH's signature");
      byte[] authOk = bytes(file, p + "auth_ok");
      byte[] signed = Arrays.copyOf(th, 64);
      System.arraycopy(finished, 0, signed, 32, 32);
      assertTrue(NodeIdentity.verifies(bytes(file, "server_identity_public"), "sluice/7 server signature", signed,
          authOk), "AUTH_OK's signature");

      assertFrame(bytes(file, p + "auth_ok_frame"), encrypted, s2c, 0, 4, 0, authOk);
      assertFrame(bytes(file, p + "read_request_frame"), encrypted, c2s, 0, 5, 1, bytes(file, "read_request"));
      assertFrame(bytes(file, p + "read_response_frame"), encrypted, s2cBody, 1, 6, 1, bytes(file, "read_response"));
      assertFrame(bytes(file, p + "read_request_frame_1"), encrypted, c2s1, 1L << 20, 5, 2,
          bytes(file, "read_request"));
    }
  }

  private static final byte[] NOTHING = new byte[0];

  /**
   * Checks a whole protected frame of one record: header, then the tag and payload of its mode.
   * {@code key} is its epoch's key_e, or body key_e for a mac mode READ_RESPONSE.
   */
  private static void assertFrame(byte[] frame, boolean encrypted, byte[] key, long seq, int type, long corr,
      byte[] payload) throws Exception {
    ByteBuffer header = ByteBuffer.allocate(16).put((byte) 0x5c).put((byte) type).putShort((short) 0)
        .putInt(payload.length).putLong(corr);
    assertArrayEquals(header.array(), Arrays.copyOf(frame, 16), "header");
    assertEquals(16 + 16 + payload.length, frame.length);
    byte[] tag = Arrays.copyOfRange(frame, 16, 32);
    byte[] body = Arrays.copyOfRange(frame, 32, frame.length);
    byte[] nonce = new byte[12];
    ByteBuffer.wrap(nonce, 4, 8).putLong(seq);
    if (!encrypted) {
      if (type == 6) { // READ_RESPONSE: GMAC, AES-GCM over no plain text with header | payload as associated data
        Cipher gmac = Cipher.getInstance("AES/GCM/NoPadding");
        gmac.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
        gmac.updateAAD(header.array());
        gmac.updateAAD(payload);
        assertArrayEquals(gmac.doFinal(), tag, "GMAC tag");
      } else {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update(ByteBuffer.allocate(8).putLong(seq).array());
        mac.update(header.array());
        mac.update(payload);
        assertArrayEquals(Arrays.copyOf(mac.doFinal(), 16), tag, "mac tag");
      }
      assertArrayEquals(payload, body, "mac mode sends the payload as it is");
      return;
    }
    Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
    gcm.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
    gcm.updateAAD(header.array());
    byte[] ciphertextThenTag = Arrays.copyOf(body, body.length + 16);
    System.arraycopy(tag, 0, ciphertextThenTag, body.length, 16);
    assertArrayEquals(payload, gcm.doFinal(ciphertextThenTag), "aead record");
  }

  private static byte[] hmac(byte[] key, byte[] data) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data);
  }

  /** HKDF-Expand for at most 32 bytes: the first block, T(1) = HMAC(prk, label | th | 0x01); th may be empty. */
  private static byte[] expandOnce(byte[] prk, String label, byte[] th, int length) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(prk, "HmacSHA256"));
    mac.update(label.getBytes(StandardCharsets.US_ASCII));
    mac.update(th);
    mac.update((byte) 1);
    return Arrays.copyOf(mac.doFinal(), length);
  }
}
