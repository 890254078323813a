package io.sluice.transport.wire;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.crypto.AesGcm;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.SessionKeys;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The protection of every frame after the handshake, in one of two modes chosen by the
 * handshake (encrypted when either side set {@code Handshake.FLAG_ENCRYPT}). A protected frame is header | tag |
 * payload (see {@link FrameHeader}): the tag sits right after the fixed-size header so a reader
 * takes both in one read and can then move a READ's bytes straight into their destination. Each
 * direction has its own keys and a sequence number that never travels: a dropped, replayed,
 * reordered, injected or altered frame fails.
 *
 * <p>A direction's sequence numbers fall into epochs of {@link #EPOCH_LENGTH}, each with a secret
 * and keys of its own ({@link KeySchedule#nextSecret}, {@link KeySchedule#recordKey}, {@link
 * KeySchedule#bodyKey}): both sides step the key schedule when they seal or open the first frame
 * or record of an epoch, with no message, and forget the previous epoch's secret and keys, so that
 * no AES key protects more than the bound docs/protocol.md ("Keys and rekeying") derives.
 *
 * <ul>
 *   <li><b>mac</b>: tag = the first 16 bytes of HMAC-SHA256(key_e, seq | header | payload). A
 *       READ_RESPONSE's tag is a GMAC instead: AES-128-GCM under body key_e with nonce = 4 zero
 *       bytes | seq, over no plain text, header | payload as associated data. A READ is still one
 *       gather write straight from registered memory, GHASHed where it lies (far cheaper than
 *       HMAC per byte); the reader GHASHes it where it landed before it reports it read ({@link
 *       Opener#verify}), or as it passes when nobody waits for it any more ({@link
 *       Opener#startBody}).
 *   <li><b>aead</b>: AES-128-GCM in bounded records. A payload is cut into records of
 *       {@link #RECORD_LENGTH} plain bytes (the last one shorter; an empty payload is one empty
 *       record), and the frame is header | tag_0 | ct_0 | tag_1 | ct_1 | ...: each record is
 *       sealed with nonce = 4 zero bytes | seq (64-bit, one sequence number per record), the
 *       header as associated data, its ciphertext as long as its plain text. The header's length
 *       is the plain payload's, so the reader knows how many records follow; a frame of up to
 *       {@link #RECORD_LENGTH} bytes is header | tag | ciphertext. Neither side ever holds more
 *       than a few records of a frame: the writer seals the next records as the socket drains
 *       ({@link FrameSeal}), the reader opens each record into the frame's destination as soon as
 *       it is whole ({@link Opener#openRecord}), plain text released only after its tag checks
 *       out. Keys are per connection, direction and epoch, so a nonce is never used twice with a
 *       key; a frame's records may fall into two epochs, each record under its own epoch's key.
 * </ul>
 *
 * <p>Records and GMACs are sealed and opened by the {@link AesGcmEngine} the transport chose when
 * it opened (OpenSSL's or the JDK's); the bytes on the wire are the same with either.
 *
 * <p>A {@link Sealer} or {@link Opener} is one direction's state and is not thread safe: the
 * writer seals under its write lock, in wire order; the one reader opens.
 */
public final class RecordLayer {
  /** Bytes of the tag that follows every protected frame's payload. */
  public static final int TAG_LENGTH = 16;
  /** Plain bytes per record of an encrypted frame; a frame of up to this many is one record. */
  public static final int RECORD_LENGTH = 64 * 1024;
  /**
   * What {@link FrameSeal#sealInto} needs beyond a record's plain bytes in its output: the header,
   * the record's tag and the room GCM writes that tag to before it moves in front.
   */
  public static final int SEAL_SLACK = FrameHeader.LENGTH + 2 * TAG_LENGTH;
  /** A sequence number's epoch is {@code seq >>> EPOCH_BITS}. */
  public static final int EPOCH_BITS = 20;
  /** Sequence numbers per epoch of the key schedule: 2^20 (frames in mac mode, records in aead mode). */
  public static final long EPOCH_LENGTH = 1L << EPOCH_BITS;
  static final int AES_KEY_LENGTH = AesGcm.KEY_LENGTH;
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private RecordLayer() {}

  /** How many records carry an encrypted payload of {@code length} bytes (at least one). */
  public static int records(long length) {
    return length <= RECORD_LENGTH ? 1 : (int) ((length + RECORD_LENGTH - 1) / RECORD_LENGTH);
  }

  /** The plain length of record {@code index} of an encrypted payload of {@code length} bytes. */
  public static int recordLength(long length, int index) {
    return (int) Math.min(RECORD_LENGTH, length - (long) index * RECORD_LENGTH);
  }

  /** Bytes that follow the header of a protected frame with a payload of {@code length} bytes. */
  public static long protectedLength(boolean encrypted, long length) {
    return length + (long) TAG_LENGTH * (encrypted ? records(length) : 1);
  }

  /** Whether a mac mode frame of this type is tagged with a GMAC over its payload rather than an HMAC. */
  public static boolean gmacTagged(FrameType type) {
    return type == FrameType.READ_RESPONSE;
  }

  /** The client's sealer (the client-to-server secret's); {@code engine} seals records and GMACs. */
  public static Sealer clientSealer(SessionKeys k, AesGcmEngine engine) {
    return new Sealer(k.clientToServerSecret(), k.encrypted(), engine);
  }

  /** The client's opener (the server-to-client secret's). */
  public static Opener clientOpener(SessionKeys k, AesGcmEngine engine) {
    return new Opener(k.serverToClientSecret(), k.encrypted(), engine);
  }

  public static Sealer serverSealer(SessionKeys k, AesGcmEngine engine) {
    return new Sealer(k.serverToClientSecret(), k.encrypted(), engine);
  }

  public static Opener serverOpener(SessionKeys k, AesGcmEngine engine) {
    return new Opener(k.clientToServerSecret(), k.encrypted(), engine);
  }

  /** The state both directions share: mode, sequence number, and the epoch's secret and keys. */
  abstract static class Direction {
    final boolean encrypted;
    private final AesGcmEngine engine;
    private final boolean sealing;
    /** secret_e of the epoch in use; zeroed when the next epoch's replaces it. */
    private byte[] secret;
    private long epoch;
    /** mac mode: HMAC-SHA256 under key_e. */
    private Mac mac;
    /** aead mode: AES-GCM under key_e, for records. */
    private AesGcm cipher;
    /** mac mode: body key_e, and the AES-GCM under it, made when the epoch's first READ_RESPONSE needs it. */
    private byte[] bodyKey;
    private AesGcm bodyMac;
    /** The header being authenticated, encoded once per record into this reused buffer. */
    private final ByteBuffer aad = ByteBuffer.allocate(FrameHeader.LENGTH);
    long seq;

    Direction(byte[] secret, boolean encrypted, AesGcmEngine engine, boolean sealing) {
      if (secret.length != KeySchedule.SECRET_LENGTH) {
        throw new IllegalArgumentException("a direction's secret has " + KeySchedule.SECRET_LENGTH + " bytes, not "
            + secret.length);
      }
      this.encrypted = encrypted;
      this.engine = engine;
      this.sealing = sealing;
      this.secret = secret.clone();
      useKeys();
    }

    /** Derives the current epoch's keys from its secret. */
    private void useKeys() {
      byte[] key = KeySchedule.recordKey(secret, encrypted);
      if (encrypted) {
        cipher = sealing ? engine.sealer(key) : engine.opener(key);
      } else {
        try {
          mac = Mac.getInstance("HmacSHA256");
          mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
          throw new IllegalStateException("JDK lacks HmacSHA256", e);
        }
        bodyKey = KeySchedule.bodyKey(secret);
      }
      Arrays.fill(key, (byte) 0);
    }

    /** Drops the current epoch's keys, for the next epoch's. */
    private void forgetKeys() {
      abandon();
      cipher = null;
      mac = null;
      bodyMac = null;
      if (bodyKey != null) {
        Arrays.fill(bodyKey, (byte) 0);
        bodyKey = null;
      }
    }

    public boolean encrypted() {
      return encrypted;
    }

    /** Takes the next sequence number, stepping to its epoch's keys when it is the first of that epoch. */
    long nextSeq() {
      if (seq == Long.MAX_VALUE) {
        throw new IllegalStateException("sequence numbers exhausted");
      }
      long s = seq++;
      if (s >>> EPOCH_BITS != epoch) {
        enter(s >>> EPOCH_BITS);
      }
      return s;
    }

    /** Steps the key schedule forward to epoch {@code e}, forgetting every secret and key before it. */
    private void enter(long e) {
      while (epoch < e) {
        byte[] next = KeySchedule.nextSecret(secret);
        Arrays.fill(secret, (byte) 0);
        secret = next;
        epoch++;
      }
      forgetKeys();
      useKeys();
    }

    /**
     * Makes {@code s} the next sequence number taken, skipping those before it: for tests and test
     * vectors that need a frame of a later epoch without sealing a million frames first. The
     * epochs skipped are stepped through when {@code s} is taken, as a real connection steps.
     */
    void skipTo(long s) {
      if (s < seq) {
        throw new IllegalArgumentException("sequence number " + s + " is behind the next one, " + seq);
      }
      seq = s;
    }

    /**
     * Drops a record or GMAC started and not finished, with what its engine holds outside the heap:
     * for a connection that closed in the middle of a frame. On the thread that seals or opens.
     */
    public void abandon() {
      if (cipher != null) {
        cipher.abandon();
      }
      if (bodyMac != null) {
        bodyMac.abandon();
      }
    }

    /** The AES-GCM of mac mode's READ_RESPONSE GMAC in the current epoch. */
    AesGcm bodyMac() {
      if (bodyMac == null) {
        bodyMac = sealing ? engine.sealer(bodyKey) : engine.opener(bodyKey);
      }
      return bodyMac;
    }

    /** aead mode: the AES-GCM of the current epoch's records. */
    AesGcm cipher() {
      return cipher;
    }

    /** The header as associated data, encoded into the reused buffer. */
    ByteBuffer aad(FrameHeader h) {
      aad.clear();
      h.encode(aad);
      return aad.flip();
    }

    /** mac mode's tag of every frame but READ_RESPONSE: HMAC(key_e, seq | header | payload), cut to 16 bytes. */
    byte[] hmacTag(long s, ByteBuffer header, ByteBuffer... payload) {
      mac.update(ByteBuffer.allocate(8).putLong(0, s));
      mac.update(header.duplicate());
      for (ByteBuffer p : payload) {
        mac.update(p.duplicate());
      }
      byte[] full = mac.doFinal();
      byte[] tag = new byte[TAG_LENGTH];
      System.arraycopy(full, 0, tag, 0, TAG_LENGTH);
      return tag;
    }
  }

  /** Protects outgoing frames of one direction. */
  public static final class Sealer extends Direction {
    Sealer(byte[] secret, boolean encrypted, AesGcmEngine engine) {
      super(secret, encrypted, engine, true);
    }

    /**
     * Seals one frame whole. Unencrypted, the payload buffers are returned as they are (not
     * copied, not consumed), so the caller's gather write still goes straight from them; encrypted,
     * the frame's records are sealed into one new buffer (for the handshake's few small frames and
     * for tests: a connection seals as it writes, with {@link #start}).
     *
     * @return the buffers to write, in order
     */
    public ByteBuffer[] seal(FrameType type, long corr, ByteBuffer... payload) {
      if (encrypted) {
        FrameSeal frame = start(type, corr, payload);
        ByteBuffer out = ByteBuffer.allocate(
            FrameHeader.LENGTH + (int) protectedLength(true, frame.header.payloadLength()) + TAG_LENGTH);
        frame.sealInto(out);
        return new ByteBuffer[] {out.flip()};
      }
      FrameHeader header = new FrameHeader(type, length(payload), corr);
      ByteBuffer head = header.toBuffer();
      long s = nextSeq();
      ByteBuffer[] out = new ByteBuffer[payload.length + 2];
      out[0] = head;
      out[1] = gmacTagged(type) ? gmacTag(s, head, payload) : ByteBuffer.wrap(hmacTag(s, head, payload));
      System.arraycopy(payload, 0, out, 2, payload.length);
      return out;
    }

    /** GMAC(body key_e, seq, header | payload), the payload read where it lies. */
    private ByteBuffer gmacTag(long s, ByteBuffer header, ByteBuffer... payload) {
      AesGcm gmac = bodyMac();
      ByteBuffer tag = ByteBuffer.allocate(TAG_LENGTH);
      try {
        gmac.startMac(s);
        gmac.macMore(header.duplicate());
        for (ByteBuffer p : payload) {
          gmac.macMore(p.duplicate());
        }
        gmac.finishMac(tag);
      } catch (RuntimeException e) {
        gmac.abandon();
        throw e;
      }
      return tag.flip();
    }

    /**
     * Starts sealing one frame of an encrypted connection record by record; the payload
     * buffers are not consumed, and must not change until the frame is sealed.
     */
    public FrameSeal start(FrameType type, long corr, ByteBuffer... payload) {
      if (!encrypted) {
        throw new IllegalStateException("only an encrypted connection seals in records");
      }
      return new FrameSeal(this, new FrameHeader(type, length(payload), corr), payload);
    }

    private static int length(ByteBuffer... payload) {
      long length = 0;
      for (ByteBuffer b : payload) {
        length += b.remaining();
      }
      if (length > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("a frame carries at most " + Integer.MAX_VALUE + " bytes, not " + length);
      }
      return (int) length;
    }

    /** Seals one record of {@code n} plain bytes taken from {@code in} into {@code out} as tag | ciphertext. */
    void sealRecord(FrameHeader h, PayloadCursor in, int n, ByteBuffer out) {
      int slot = out.position();
      out.position(slot + TAG_LENGTH);
      long s = nextSeq(); // first: it may step to the next epoch's cipher
      AesGcm cipher = cipher();
      cipher.startSeal(s, aad(h));
      ByteBuffer last = EMPTY.duplicate();
      for (int left = n; left > 0; ) {
        ByteBuffer piece = in.next(left);
        left -= piece.remaining();
        if (left == 0) {
          last = piece;
        } else {
          cipher.seal(piece, out);
        }
      }
      cipher.finishSeal(last, out);
      // GCM appends the tag; the wire wants it first, in the slot kept for it.
      int end = out.position();
      out.put(slot, out, end - TAG_LENGTH, TAG_LENGTH);
      out.position(end - TAG_LENGTH);
    }
  }

  /** Walks the payload buffers of one frame without consuming them. Not thread safe. */
  static final class PayloadCursor {
    private final ByteBuffer[] parts;
    private int part;

    PayloadCursor(ByteBuffer... payload) {
      parts = new ByteBuffer[payload.length];
      for (int i = 0; i < payload.length; i++) {
        parts[i] = payload[i].duplicate();
      }
    }

    /** The next at most {@code max} bytes (at least one), as a view; they count as taken. */
    ByteBuffer next(int max) {
      while (!parts[part].hasRemaining()) {
        part++;
      }
      ByteBuffer p = parts[part];
      int take = Math.min(max, p.remaining());
      ByteBuffer piece = p.slice(p.position(), take);
      p.position(p.position() + take);
      return piece;
    }
  }

  /**
   * One frame of an encrypted connection being sealed into the writer's output buffer, a few
   * records at a time. Sequence numbers are taken as records are sealed, so frames must be
   * sealed one after the other in wire order. Owned by the writer; not thread safe.
   */
  public static final class FrameSeal {
    private final Sealer sealer;
    private final FrameHeader header;
    private final PayloadCursor payload;
    private final int records;
    private int sealed = -1;

    private FrameSeal(Sealer sealer, FrameHeader header, ByteBuffer... payload) {
      this.sealer = sealer;
      this.header = header;
      this.payload = new PayloadCursor(payload);
      this.records = records(header.payloadLength());
    }

    /**
     * Seals as much of the frame as {@code out} has room for (the header first, then whole
     * records; a record of n bytes needs n + {@link #SEAL_SLACK} bytes free).
     *
     * @return true when the whole frame is sealed
     */
    public boolean sealInto(ByteBuffer out) {
      if (sealed < 0) {
        if (out.remaining() < SEAL_SLACK + recordLength(header.payloadLength(), 0)) {
          return false;
        }
        header.encode(out);
        sealed = 0;
      }
      while (sealed < records) {
        int n = recordLength(header.payloadLength(), sealed);
        if (out.remaining() < n + 2 * TAG_LENGTH) {
          return false;
        }
        sealer.sealRecord(header, payload, n, out);
        sealed++;
      }
      return true;
    }
  }

  /** Checks (and decrypts) incoming frames of one direction. */
  public static final class Opener extends Direction {
    /** The number of the READ_RESPONSE whose body {@link #startBody} began checking. */
    private long bodySeq;

    Opener(byte[] secret, boolean encrypted, AesGcmEngine engine) {
      super(secret, encrypted, engine, false);
    }

    /**
     * Opens a frame whose tag and payload (plain text, or the ciphertext of a frame of one record)
     * were received whole.
     *
     * @return the plain payload ({@code payload} itself when unencrypted)
     * @throws ProtocolException if the frame fails authentication
     */
    public ByteBuffer open(FrameHeader h, ByteBuffer tag, ByteBuffer payload) throws ProtocolException {
      if (payload.remaining() != h.payloadLength() || tag.remaining() != TAG_LENGTH) {
        throw new ProtocolException("frame of " + payload.remaining() + " payload bytes for a header of "
            + h.payloadLength());
      }
      if (!encrypted) {
        verify(h, tag, payload);
        return payload;
      }
      if (records(h.payloadLength()) != 1) {
        throw new ProtocolException(h.type() + " frame of " + h.payloadLength() + " bytes read whole where"
            + " records of at most " + RECORD_LENGTH + " are expected");
      }
      ByteBuffer record = ByteBuffer.allocate(h.payloadLength() + TAG_LENGTH).put(payload.duplicate()).put(tag.duplicate());
      ByteBuffer plain = ByteBuffer.allocate(h.payloadLength());
      openRecord(h, record.flip(), plain);
      return plain.flip();
    }

    /**
     * Opens one record of an encrypted frame: {@code record} holds its ciphertext followed by its
     * tag; the plain text goes to {@code dst} (its position advances), and no plain text is left
     * there unless the tag checks out (the JDK's engine writes nothing until then; OpenSSL's
     * decrypts straight into {@code dst} and zeroes those bytes when the tag fails).
     */
    public void openRecord(FrameHeader h, ByteBuffer record, ByteBuffer dst) throws ProtocolException {
      if (!encrypted) {
        throw new IllegalStateException("not an encrypted connection");
      }
      long s = nextSeq();
      try {
        cipher().open(s, aad(h), record, dst);
      } catch (AEADBadTagException e) {
        throw new ProtocolException(h.type() + " record " + s + " failed authentication (altered, injected or"
            + " out of order)");
      } catch (RuntimeException e) {
        throw new ProtocolException("cannot decrypt " + h.type() + " record " + s + ": " + e.getMessage());
      }
    }

    /**
     * Checks an unencrypted frame's tag against its payload as received: for a READ_RESPONSE, the
     * bytes where they landed, before anyone is told they arrived.
     *
     * @throws ProtocolException if the frame fails authentication
     */
    public void verify(FrameHeader h, ByteBuffer tag, ByteBuffer payload) throws ProtocolException {
      if (encrypted) {
        throw new IllegalStateException("an encrypted connection's frames are opened, not verified");
      }
      if (gmacTagged(h.type())) {
        startBody(h);
        bodyPiece(payload.duplicate());
        finishBody(h, tag);
        return;
      }
      long s = nextSeq();
      byte[] expected = hmacTag(s, h.toBuffer(), payload);
      byte[] actual = new byte[TAG_LENGTH];
      tag.duplicate().get(actual);
      if (!MessageDigest.isEqual(expected, actual)) {
        throw failed(h, s);
      }
    }

    /**
     * Starts checking an unencrypted READ_RESPONSE whose body is taken in pieces as it arrives
     * ({@link #bodyPiece}, in order) and dropped, nobody waiting for it any more; {@link
     * #finishBody} then checks its tag, or {@link #abandon} drops the check.
     */
    public void startBody(FrameHeader h) {
      if (encrypted || !gmacTagged(h.type())) {
        throw new IllegalStateException("only an unencrypted READ_RESPONSE is checked piece by piece, not "
            + (encrypted ? "an encrypted " : "a ") + h.type());
      }
      bodySeq = nextSeq(); // first: it may step to the next epoch's key
      AesGcm gmac = bodyMac();
      gmac.startMac(bodySeq);
      gmac.macMore(aad(h));
    }

    /** The next piece of the body {@link #startBody} began checking; {@code piece} is consumed. */
    public void bodyPiece(ByteBuffer piece) {
      bodyMac().macMore(piece);
    }

    /**
     * Ends the check {@link #startBody} began: the tag that came with the header against the body's
     * pieces.
     *
     * @throws ProtocolException if the frame fails authentication
     */
    public void finishBody(FrameHeader h, ByteBuffer tag) throws ProtocolException {
      try {
        bodyMac().checkMac(tag.duplicate());
      } catch (AEADBadTagException e) {
        throw failed(h, bodySeq);
      }
    }

    private static ProtocolException failed(FrameHeader h, long s) {
      return new ProtocolException(h.type() + " frame " + s + " failed authentication (altered, injected or"
          + " out of order)");
    }
  }
}
