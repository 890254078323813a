package io.sluice.transport.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.SessionKeys;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The record layer's key schedule and mac mode's READ_RESPONSE tag (docs/protocol.md, 3.1 and
 * 3.2), with both engines: a frame of epoch 1 carries a tag of epoch 1's keys and no other, both
 * ends step at the same sequence number, an encrypted frame's records take the keys of their own
 * epochs, and a READ_RESPONSE's body is covered by its GMAC (protocol 6 left it out of the tag).
 * Tags are recomputed here with the JDK's HMAC and AES-GCM from the schedule's keys, not taken from
 * the record layer. Sealers and openers start at a later sequence number ({@link
 * RecordLayer.Direction#skipTo}) rather than seal a million frames first.
 */
class RecordLayerEpochTest {
  private static final long EPOCH = RecordLayer.EPOCH_LENGTH;
  private static final int HEADER = FrameHeader.LENGTH;
  private static final int TAG = RecordLayer.TAG_LENGTH;

  static Stream<Arguments> modes() {
    List<Arguments> out = new ArrayList<>();
    for (AesGcmEngine engine : AesGcmEngine.values()) {
      for (boolean encrypted : new boolean[] {false, true}) {
        out.add(Arguments.of(engine, encrypted));
      }
    }
    return out.stream();
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** The session's keys for a test of {@code engine}, which is skipped, saying why, where the engine is unavailable. */
  private static SessionKeys keys(AesGcmEngine engine, boolean encrypted) {
    assumeTrue(engine.unavailabilityCause().isEmpty(),
        () -> engine + " unavailable: " + engine.unavailabilityCause().get());
    return new SessionKeys(random(32, 1), random(32, 2), encrypted);
  }

  /** {@code direction} (a sealer or an opener) moved on to sequence number {@code seq}. */
  private static <D extends RecordLayer.Direction> D at(long seq, D direction) {
    direction.skipTo(seq);
    return direction;
  }

  /** The buffers a writer would write, as one array. */
  private static byte[] whole(ByteBuffer... parts) {
    ByteBuffer b = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(ByteBuffer::remaining).sum());
    for (ByteBuffer p : parts) {
      b.put(p.duplicate());
    }
    return b.array();
  }

  /** Opens a whole frame of one record as a reader would. */
  private static ByteBuffer open(RecordLayer.Opener opener, byte[] frame) throws ProtocolException {
    FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(frame), Integer.MAX_VALUE);
    return opener.open(h, ByteBuffer.wrap(frame, HEADER, TAG).slice(),
        ByteBuffer.wrap(frame, HEADER + TAG, h.payloadLength()).slice());
  }

  private static byte[] nonce(long seq) {
    byte[] n = new byte[12];
    ByteBuffer.wrap(n, 4, 8).putLong(seq);
    return n;
  }

  /** Whether {@code tag} is the mac mode HMAC tag of header | body at {@code seq} under {@code key}. */
  private static boolean hmacChecks(byte[] key, long seq, byte[] header, byte[] body, byte[] tag) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    mac.update(ByteBuffer.allocate(8).putLong(seq).array());
    mac.update(header);
    mac.update(body);
    return MessageDigest.isEqual(Arrays.copyOf(mac.doFinal(), TAG), tag);
  }

  /** Whether {@code tag} is the GMAC of header | body at {@code seq} under {@code key}. */
  private static boolean gmacChecks(byte[] key, long seq, byte[] header, byte[] body, byte[] tag) throws Exception {
    Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
    gcm.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce(seq)));
    gcm.updateAAD(header);
    gcm.updateAAD(body);
    return MessageDigest.isEqual(gcm.doFinal(), tag);
  }

  /** Whether tag | ciphertext is a record sealed at {@code seq} under {@code key} with the header as associated data. */
  private static boolean recordOpens(byte[] key, long seq, byte[] header, byte[] tag, byte[] ciphertext)
      throws Exception {
    Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
    gcm.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce(seq)));
    gcm.updateAAD(header);
    byte[] sealed = Arrays.copyOf(ciphertext, ciphertext.length + TAG);
    System.arraycopy(tag, 0, sealed, ciphertext.length, TAG);
    try {
      gcm.doFinal(sealed);
      return true;
    } catch (AEADBadTagException e) {
      return false;
    }
  }

  /** Whether a whole frame of one record checks out at {@code seq} under {@code key}, in its mode. */
  private static boolean frameChecks(boolean encrypted, byte[] key, long seq, byte[] frame) throws Exception {
    byte[] header = Arrays.copyOf(frame, HEADER);
    byte[] tag = Arrays.copyOfRange(frame, HEADER, HEADER + TAG);
    byte[] body = Arrays.copyOfRange(frame, HEADER + TAG, frame.length);
    return encrypted ? recordOpens(key, seq, header, tag, body) : hmacChecks(key, seq, header, body, tag);
  }

  private static ByteBuffer readRequest(long key) {
    ByteBuffer b = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
    new Frames.ReadRequestFrame(key, 0, 16).encode(b);
    return b.flip();
  }

  @ParameterizedTest(name = "{0}, encrypted={1}")
  @MethodSource("modes")
  void aFrameSealedInEpoch1CarriesEpoch1sKeyAndNoOther(AesGcmEngine engine, boolean encrypted) throws Exception {
    SessionKeys k = keys(engine, encrypted);
    RecordLayer.Sealer sealer = at(EPOCH, RecordLayer.clientSealer(k, engine));
    byte[] frame = whole(sealer.seal(FrameType.READ_REQUEST, 2, readRequest(7)));
    byte[] secret1 = KeySchedule.nextSecret(k.clientToServerSecret());
    assertTrue(frameChecks(encrypted, KeySchedule.recordKey(secret1, encrypted), EPOCH, frame), "under key_1");
    assertFalse(frameChecks(encrypted, KeySchedule.recordKey(k.clientToServerSecret(), encrypted), EPOCH, frame),
        "under key_0, the key of the epoch before");

    assertEquals(readRequest(7), open(at(EPOCH, RecordLayer.serverOpener(k, engine)), frame),
        "the peer, at the same number, opens it");
    RecordLayer.Opener behind = at(EPOCH - 1, RecordLayer.serverOpener(k, engine));
    assertThrows(ProtocolException.class, () -> open(behind, frame), "at the last number of epoch 0");
  }

  @ParameterizedTest(name = "{0}, encrypted={1}")
  @MethodSource("modes")
  void bothEndsStepAtTheSameSequenceNumber(AesGcmEngine engine, boolean encrypted) throws Exception {
    SessionKeys k = keys(engine, encrypted);
    RecordLayer.Sealer sealer = at(EPOCH - 2, RecordLayer.serverSealer(k, engine));
    RecordLayer.Opener opener = at(EPOCH - 2, RecordLayer.clientOpener(k, engine));
    byte[] key0 = KeySchedule.recordKey(k.serverToClientSecret(), encrypted);
    byte[] key1 = KeySchedule.recordKey(KeySchedule.nextSecret(k.serverToClientSecret()), encrypted);
    for (long seq = EPOCH - 2; seq < EPOCH + 3; seq++) {
      ByteBuffer message = ByteBuffer.wrap(random(100, seq));
      byte[] frame = whole(sealer.seal(FrameType.RESPONSE, seq, message));
      assertTrue(frameChecks(encrypted, seq < EPOCH ? key0 : key1, seq, frame), "frame " + seq + " under its epoch's key");
      assertEquals(message, open(opener, frame), "frame " + seq);
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void anEncryptedFramesRecordsTakeTheKeysOfTheirOwnEpochs(AesGcmEngine engine) throws Exception {
    SessionKeys k = keys(engine, true);
    RecordLayer.Sealer sealer = at(EPOCH - 1, RecordLayer.serverSealer(k, engine));
    int length = 2 * RecordLayer.RECORD_LENGTH + 10;
    byte[] payload = random(length, 3);
    byte[] frame = whole(sealer.seal(FrameType.READ_RESPONSE, 9, ByteBuffer.wrap(payload)));
    byte[] header = Arrays.copyOf(frame, HEADER);
    byte[] key0 = KeySchedule.recordKey(k.serverToClientSecret(), true);
    byte[] key1 = KeySchedule.recordKey(KeySchedule.nextSecret(k.serverToClientSecret()), true);

    RecordLayer.Opener opener = at(EPOCH - 1, RecordLayer.clientOpener(k, engine));
    FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(header), Integer.MAX_VALUE);
    ByteBuffer plain = ByteBuffer.allocateDirect(length);
    int at = HEADER;
    for (int i = 0; i < RecordLayer.records(length); i++) {
      int n = RecordLayer.recordLength(length, i);
      byte[] tag = Arrays.copyOfRange(frame, at, at + TAG);
      byte[] ciphertext = Arrays.copyOfRange(frame, at + TAG, at + TAG + n);
      long seq = EPOCH - 1 + i;
      assertTrue(recordOpens(i == 0 ? key0 : key1, seq, header, tag, ciphertext), "record " + i + " under its epoch's key");
      assertFalse(recordOpens(i == 0 ? key1 : key0, seq, header, tag, ciphertext), "record " + i + " under the other");
      ByteBuffer record = ByteBuffer.allocateDirect(n + TAG).put(ciphertext).put(tag).flip();
      opener.openRecord(h, record, plain);
      at += TAG + n;
    }
    assertEquals(ByteBuffer.wrap(payload), plain.flip());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void aMacModeReadResponseIsTaggedByTheGmacOfItsEpochsBodyKey(AesGcmEngine engine) throws Exception {
    SessionKeys k = keys(engine, false);
    RecordLayer.Sealer sealer = RecordLayer.serverSealer(k, engine);
    byte[] secret = k.serverToClientSecret();
    for (long seq : new long[] {0, EPOCH}) {
      sealer.skipTo(seq);
      byte[] body = random(5000, seq);
      ByteBuffer region = ByteBuffer.allocateDirect(body.length).put(body).flip();
      ByteBuffer[] parts = sealer.seal(FrameType.READ_RESPONSE, 3, region);
      assertSame(region, parts[2], "the body goes out as it lies, not copied");
      byte[] frame = whole(parts);
      byte[] header = Arrays.copyOf(frame, HEADER);
      byte[] tag = Arrays.copyOfRange(frame, HEADER, HEADER + TAG);
      byte[] bodyKey = KeySchedule.bodyKey(secret);
      assertTrue(gmacChecks(bodyKey, seq, header, body, tag), "GMAC under body key_" + (seq >>> 20));
      assertFalse(hmacChecks(KeySchedule.recordKey(secret, false), seq, header, new byte[0], tag),
          "not protocol 6's HMAC over the header alone");
      secret = KeySchedule.nextSecret(secret);
      assertFalse(gmacChecks(KeySchedule.bodyKey(secret), seq, header, body, tag), "not under the next epoch's");
    }
  }

  /**
   * What a party on the path could do in protocol 6, where a READ_RESPONSE's tag covered its header
   * only: alter the body and keep the tag, or put the tag protocol 6 computed in front of an
   * altered body. Neither opens; nor does one altered as it passes, checked piece by piece.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(AesGcmEngine.class)
  void aMacModeReadResponseWithAnAlteredBodyIsRefused(AesGcmEngine engine) throws Exception {
    SessionKeys k = keys(engine, false);
    RecordLayer.Sealer sealer = RecordLayer.serverSealer(k, engine);
    byte[] body = random(4096, 4);
    byte[] frame = whole(sealer.seal(FrameType.READ_RESPONSE, 5, ByteBuffer.wrap(body)));
    byte[] altered = frame.clone();
    altered[HEADER + TAG + 1000] ^= 1;
    byte[] protocol6 = altered.clone();
    Mac headerOnly = Mac.getInstance("HmacSHA256");
    headerOnly.init(new SecretKeySpec(KeySchedule.recordKey(k.serverToClientSecret(), false), "HmacSHA256"));
    headerOnly.update(ByteBuffer.allocate(8).putLong(0).array());
    headerOnly.update(frame, 0, HEADER);
    System.arraycopy(headerOnly.doFinal(), 0, protocol6, HEADER, TAG);

    for (byte[] forged : List.of(altered, protocol6)) {
      assertThrows(ProtocolException.class, () -> open(RecordLayer.clientOpener(k, engine), forged));
      RecordLayer.Opener passing = RecordLayer.clientOpener(k, engine);
      FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(forged), Integer.MAX_VALUE);
      passing.startBody(h);
      for (int at = HEADER + TAG; at < forged.length; at += 1000) {
        passing.bodyPiece(ByteBuffer.wrap(forged, at, Math.min(1000, forged.length - at)));
      }
      assertThrows(ProtocolException.class, () -> passing.finishBody(h, ByteBuffer.wrap(forged, HEADER, TAG)));
    }
    assertArrayEquals(body, bytes(open(RecordLayer.clientOpener(k, engine), frame)), "the frame as sealed opens");
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }
}
