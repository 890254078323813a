package io.sluice.transport.spi;

import io.sluice.transport.ProtocolException;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The protection of every frame after the handshake, in one of two modes chosen by the
 * handshake ({@link Handshake.Transcript#encrypted()}). A protected frame is header | tag |
 * payload (see {@link FrameHeader}): the tag sits right after the fixed-size header so a reader
 * takes both in one read and can then move a READ's bytes straight into their destination. Each direction has its own key and a sequence number that counts its frames from
 * 0 and never travels: a dropped, replayed, reordered, injected or altered frame fails.
 *
 * <ul>
 *   <li><b>mac</b>: tag = the first 16 bytes of HMAC-SHA256(key, seq | header | payload). For
 *       READ_RESPONSE the payload is left out (seq | header only), so a READ is still one gather
 *       write straight from registered memory and costs no hashing per byte: its length,
 *       correlation id and place in the stream are authenticated, its bytes are not.
 *   <li><b>aead</b>: AES-128-GCM with nonce = 4 zero bytes | seq (64-bit), the header as
 *       associated data, the payload encrypted in place of itself, the 16-byte GCM tag after
 *       it. Keys are per connection and per direction, so a nonce is never used twice with a key.
 * </ul>
 *
 * <p>A {@link Sealer} or {@link Opener} is one direction's state and is not thread safe: the
 * writer seals under its write lock, in wire order; the one reader opens.
 */
public final class RecordLayer {
  /** Bytes of the tag that follows every protected frame's payload. */
  public static final int TAG_LENGTH = 16;
  static final int AES_KEY_LENGTH = 16;
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private RecordLayer() {}

  /** Whether a plain (mac) connection's tag covers this frame type's payload. */
  static boolean macCoversPayload(FrameType type) {
    return type != FrameType.READ_RESPONSE;
  }

  /** The client's sealer (client-to-server key). */
  public static Sealer clientSealer(Handshake.SessionKeys k) {
    return new Sealer(k.clientToServer(), k.encrypted());
  }

  /** The client's opener (server-to-client key). */
  public static Opener clientOpener(Handshake.SessionKeys k) {
    return new Opener(k.serverToClient(), k.encrypted());
  }

  public static Sealer serverSealer(Handshake.SessionKeys k) {
    return new Sealer(k.serverToClient(), k.encrypted());
  }

  public static Opener serverOpener(Handshake.SessionKeys k) {
    return new Opener(k.clientToServer(), k.encrypted());
  }

  /** The state both directions share: key, mode, sequence number. */
  private abstract static class Direction {
    final boolean encrypted;
    final SecretKeySpec key;
    final Mac mac;
    final Cipher cipher;
    long seq;

    Direction(byte[] key, boolean encrypted) {
      this.encrypted = encrypted;
      try {
        if (encrypted) {
          this.key = new SecretKeySpec(key, "AES");
          this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
          this.mac = null;
        } else {
          this.key = new SecretKeySpec(key, "HmacSHA256");
          this.mac = Mac.getInstance("HmacSHA256");
          this.mac.init(this.key);
          this.cipher = null;
        }
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("JDK lacks " + (encrypted ? "AES/GCM" : "HmacSHA256"), e);
      }
    }

    public boolean encrypted() {
      return encrypted;
    }

    long nextSeq() {
      if (seq == Long.MAX_VALUE) {
        throw new IllegalStateException("sequence numbers exhausted");
      }
      return seq++;
    }

    GCMParameterSpec nonce(long s) {
      return new GCMParameterSpec(TAG_LENGTH * 8, ByteBuffer.allocate(12).putInt(0).putLong(s).array());
    }

    byte[] macTag(long s, ByteBuffer header, boolean coverPayload, ByteBuffer... payload) {
      mac.update(ByteBuffer.allocate(8).putLong(0, s));
      mac.update(header.duplicate());
      if (coverPayload) {
        for (ByteBuffer p : payload) {
          mac.update(p.duplicate());
        }
      }
      byte[] full = mac.doFinal();
      byte[] tag = new byte[TAG_LENGTH];
      System.arraycopy(full, 0, tag, 0, TAG_LENGTH);
      return tag;
    }
  }

  /** Protects outgoing frames of one direction. */
  public static final class Sealer extends Direction {
    Sealer(byte[] key, boolean encrypted) {
      super(key, encrypted);
    }

    /**
     * Seals one frame. Unencrypted, the payload buffers are returned as they are (not copied, not
     * consumed), so the caller's gather write still goes straight from them.
     *
     * @return the buffers to write, in order: header, tag, payload (or ciphertext)
     */
    public ByteBuffer[] seal(FrameType type, long corr, ByteBuffer... payload) {
      int length = 0;
      for (ByteBuffer b : payload) {
        length += b.remaining();
      }
      ByteBuffer header = new FrameHeader(type, length, corr).toBuffer();
      long s = nextSeq();
      if (!encrypted) {
        ByteBuffer[] out = new ByteBuffer[payload.length + 2];
        out[0] = header;
        out[1] = ByteBuffer.wrap(macTag(s, header, macCoversPayload(type), payload));
        System.arraycopy(payload, 0, out, 2, payload.length);
        return out;
      }
      ByteBuffer sealed = ByteBuffer.allocate(length + TAG_LENGTH);
      try {
        cipher.init(Cipher.ENCRYPT_MODE, key, nonce(s));
        cipher.updateAAD(header.duplicate());
        for (ByteBuffer p : payload) {
          cipher.update(p.duplicate(), sealed);
        }
        cipher.doFinal(EMPTY.duplicate(), sealed);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("AES-GCM failed to seal a frame", e);
      }
      // GCM appends the tag; the wire wants it first, so hand out two views of the one buffer.
      return new ByteBuffer[] {header, sealed.slice(length, TAG_LENGTH), sealed.slice(0, length)};
    }
  }

  /** Checks (and decrypts) incoming frames of one direction. */
  public static final class Opener extends Direction {
    Opener(byte[] key, boolean encrypted) {
      super(key, encrypted);
    }

    /**
     * Opens a frame whose tag and payload (plain text or ciphertext) were received.
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
      ByteBuffer plain = ByteBuffer.allocate(h.payloadLength());
      decrypt(h, tag, payload, plain);
      return plain.flip();
    }

    /**
     * Decrypts an encrypted frame's ciphertext into {@code dst} (its remaining bytes). Nothing is
     * written to {@code dst} unless the tag checks out.
     */
    public void decrypt(FrameHeader h, ByteBuffer tag, ByteBuffer ciphertext, ByteBuffer dst) throws ProtocolException {
      if (!encrypted) {
        throw new IllegalStateException("not an encrypted connection");
      }
      long s = nextSeq();
      try {
        cipher.init(Cipher.DECRYPT_MODE, key, nonce(s));
        cipher.updateAAD(h.toBuffer());
        // GCM takes the last 16 bytes of all input as the tag and releases plain text only
        // after checking it.
        cipher.update(ciphertext.duplicate(), dst);
        cipher.doFinal(tag.duplicate(), dst);
      } catch (AEADBadTagException e) {
        throw new ProtocolException(h.type() + " frame " + s + " failed authentication (altered, injected or"
            + " out of order)");
      } catch (GeneralSecurityException e) {
        throw new ProtocolException("cannot decrypt " + h.type() + " frame " + s + ": " + e.getMessage());
      }
    }

    /**
     * Checks an unencrypted frame's tag; {@code payload} is the payload as received (ignored for
     * READ_RESPONSE, whose bytes the tag does not cover).
     */
    public void verify(FrameHeader h, ByteBuffer tag, ByteBuffer payload) throws ProtocolException {
      if (encrypted) {
        throw new IllegalStateException("an encrypted connection's frames are opened, not verified");
      }
      long s = nextSeq();
      byte[] expected = macTag(s, h.toBuffer(), macCoversPayload(h.type()), payload);
      byte[] actual = new byte[TAG_LENGTH];
      tag.duplicate().get(actual);
      if (!MessageDigest.isEqual(expected, actual)) {
        throw new ProtocolException(h.type() + " frame " + s + " failed authentication (altered, injected or"
            + " out of order)");
      }
    }
  }
}
