package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import javax.crypto.AEADBadTagException;

/**
 * The implementations of AES-128-GCM a transport can seal and open records with. Both produce the
 * same bytes on the wire; they differ in speed and in where they are present. A transport picks
 * one when it opens ({@link EngineChoice#choose}) and keeps it. Thread safe; the {@link AesGcm}s
 * it makes are not.
 */
public enum AesGcmEngine {
  /** OpenSSL's libcrypto through {@link OpenSslAesGcm}: fast from the first byte, where it loads. */
  OPENSSL {
    @Override
    AesGcm create(byte[] key, boolean encrypt) {
      return OpenSslAesGcm.create(key, encrypt);
    }

    @Override
    public Optional<String> unavailabilityCause() {
      return OpenSslAesGcm.unavailabilityCause();
    }

    @Override
    public String description() {
      return OpenSslAesGcm.isAvailable() ? OpenSslAesGcm.openSslVersion() : "OpenSSL (unavailable)";
    }
  },
  /** The JDK's {@code Cipher}: on every JVM, slow until C2 compiles it. */
  JDK {
    @Override
    AesGcm create(byte[] key, boolean encrypt) {
      return new JdkAesGcm(key, encrypt);
    }

    @Override
    public Optional<String> unavailabilityCause() {
      return Optional.empty();
    }

    @Override
    public String description() {
      return "JDK " + Runtime.version().feature() + " javax.crypto";
    }
  };

  /** A record sealed by every correct engine: key 00..0f, record 0x0102030405060708, associated data 40..4f, plain text 80..a7. */
  private static final byte[] SELF_CHECK_SEALED = HexFormat.of().parseHex(
      "2c35c04e8c332b9525fdddea53249315ef8c9807bdcae67511ce93203a2e3e449607e07ca8dd9ec1"
          + "cf9265dfdf96b7433cd986227b71459a");
  private static final long SELF_CHECK_SEQ = 0x0102030405060708L;
  /** The GMAC of the same associated data then plain text, under the same key and number. */
  private static final byte[] SELF_CHECK_MAC = HexFormat.of().parseHex("23201e44033811bb48d85b37223fc093");

  abstract AesGcm create(byte[] key, boolean encrypt);

  /** Why this engine cannot be used in this process, if it cannot. */
  public abstract Optional<String> unavailabilityCause();

  /** The implementation in words, for logs and the host check. */
  public abstract String description();

  /** The name the configuration and the metrics use: "openssl" or "jdk". */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The sealing side under {@code key} (16 bytes). */
  public AesGcm sealer(byte[] key) {
    return create(key, true);
  }

  /** The opening side under {@code key} (16 bytes). */
  public AesGcm opener(byte[] key) {
    return create(key, false);
  }

  /**
   * Seals a known record and compares it byte for byte, opens it, and checks that a record with
   * one bit of its tag flipped fails authentication and leaves no plain text behind; then makes a
   * known GMAC, checks it, and checks that it fails for data with one bit flipped.
   *
   * @return what went wrong, if anything
   */
  public Optional<String> selfCheck() {
    Optional<String> cause = unavailabilityCause();
    if (cause.isPresent()) {
      return cause;
    }
    try {
      byte[] key = new byte[AesGcm.KEY_LENGTH];
      byte[] aad = new byte[16];
      byte[] plain = new byte[SELF_CHECK_SEALED.length - AesGcm.TAG_LENGTH];
      for (int i = 0; i < key.length; i++) {
        key[i] = (byte) i;
        aad[i] = (byte) (0x40 + i);
      }
      for (int i = 0; i < plain.length; i++) {
        plain[i] = (byte) (0x80 + i);
      }
      ByteBuffer sealed = ByteBuffer.allocateDirect(SELF_CHECK_SEALED.length);
      AesGcm sealer = sealer(key);
      sealer.startSeal(SELF_CHECK_SEQ, ByteBuffer.wrap(aad));
      ByteBuffer in = ByteBuffer.allocateDirect(plain.length).put(plain).flip();
      sealer.seal(in.slice(0, 7), sealed);
      sealer.finishSeal(in.slice(7, plain.length - 7), sealed);
      if (!sealed.flip().equals(ByteBuffer.wrap(SELF_CHECK_SEALED))) {
        return Optional.of(id() + " sealed a known record wrongly");
      }
      AesGcm opener = opener(key);
      ByteBuffer opened = ByteBuffer.allocateDirect(plain.length);
      opener.open(SELF_CHECK_SEQ, ByteBuffer.wrap(aad), sealed.duplicate(), opened);
      if (!opened.flip().equals(ByteBuffer.wrap(plain))) {
        return Optional.of(id() + " opened a known record wrongly");
      }
      ByteBuffer forged = ByteBuffer.allocateDirect(SELF_CHECK_SEALED.length).put(sealed.duplicate()).flip();
      forged.put(forged.limit() - 1, (byte) (forged.get(forged.limit() - 1) ^ 1));
      ByteBuffer dst = ByteBuffer.allocateDirect(plain.length);
      try {
        opener.open(SELF_CHECK_SEQ, ByteBuffer.wrap(aad), forged, dst);
        return Optional.of(id() + " opened a record whose tag was altered");
      } catch (AEADBadTagException expected) {
        if (!dst.clear().equals(ByteBuffer.allocateDirect(plain.length))) {
          return Optional.of(id() + " left plain text of a record that failed authentication");
        }
      }
      return selfCheckMac(key, aad, in);
    } catch (RuntimeException | AEADBadTagException e) {
      return Optional.of(id() + " failed its self-check: " + e);
    }
  }

  private Optional<String> selfCheckMac(byte[] key, byte[] aad, ByteBuffer data) throws AEADBadTagException {
    AesGcm sealer = sealer(key);
    sealer.startMac(SELF_CHECK_SEQ);
    sealer.macMore(ByteBuffer.wrap(aad));
    sealer.macMore(data.duplicate());
    ByteBuffer tag = ByteBuffer.allocate(AesGcm.TAG_LENGTH);
    sealer.finishMac(tag);
    if (!tag.flip().equals(ByteBuffer.wrap(SELF_CHECK_MAC))) {
      return Optional.of(id() + " made a known GMAC wrongly");
    }
    AesGcm opener = opener(key);
    opener.startMac(SELF_CHECK_SEQ);
    opener.macMore(ByteBuffer.wrap(aad));
    opener.macMore(data.duplicate());
    opener.checkMac(tag.duplicate());
    ByteBuffer forged = ByteBuffer.allocateDirect(data.remaining()).put(data.duplicate()).flip();
    forged.put(3, (byte) (forged.get(3) ^ 1));
    opener.startMac(SELF_CHECK_SEQ);
    opener.macMore(ByteBuffer.wrap(aad));
    opener.macMore(forged);
    try {
      opener.checkMac(tag.duplicate());
      return Optional.of(id() + " checked a GMAC of altered data");
    } catch (AEADBadTagException expected) {
      return Optional.empty();
    }
  }
}
