package io.sluice.transport.crypto;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-GCM through the JDK's {@code Cipher} ("AES/GCM/NoPadding"): present on every JVM, slow until
 * C2 has compiled it (about 10 ms of CPU per MiB before that). The engine of last resort. Its
 * GMAC copies what it MACs: the JDK's GCM holds associated data in a heap buffer of its own until
 * the tag, so a READ_RESPONSE's body passes through the heap here, never with OpenSSL's. Not
 * thread safe.
 */
final class JdkAesGcm extends AesGcm {
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
  private final SecretKeySpec key;
  private final Cipher cipher;
  private final int mode;
  private final byte[] iv = new byte[12];

  JdkAesGcm(byte[] key, boolean encrypt) {
    if (key.length != KEY_LENGTH) {
      throw new IllegalArgumentException("AES-128 takes a key of " + KEY_LENGTH + " bytes, not " + key.length);
    }
    this.key = new SecretKeySpec(key, "AES");
    this.mode = encrypt ? Cipher.ENCRYPT_MODE : Cipher.DECRYPT_MODE;
    try {
      this.cipher = Cipher.getInstance("AES/GCM/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK lacks AES/GCM/NoPadding", e);
    }
  }

  private void start(long seq, ByteBuffer aad) throws GeneralSecurityException {
    cipher.init(mode, key, new GCMParameterSpec(TAG_LENGTH * 8, nonce(seq, iv)));
    cipher.updateAAD(aad);
  }

  @Override
  public void startSeal(long seq, ByteBuffer aad) {
    try {
      start(seq, aad);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to start a record", e);
    }
  }

  @Override
  public void seal(ByteBuffer in, ByteBuffer out) {
    try {
      cipher.update(in, out);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to seal a record", e);
    }
  }

  @Override
  public void finishSeal(ByteBuffer last, ByteBuffer out) {
    try {
      cipher.doFinal(last == null ? EMPTY.duplicate() : last, out);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to seal a record", e);
    }
  }

  @Override
  public void startMac(long seq) {
    try {
      cipher.init(mode, key, new GCMParameterSpec(TAG_LENGTH * 8, nonce(seq, iv)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to start a GMAC", e);
    }
  }

  @Override
  public void macMore(ByteBuffer data) {
    cipher.updateAAD(data);
  }

  @Override
  public void finishMac(ByteBuffer out) {
    if (mode != Cipher.ENCRYPT_MODE) {
      throw new IllegalStateException("an opening AesGcm checks a GMAC, it does not make one");
    }
    finishSeal(EMPTY.duplicate(), out);
  }

  @Override
  public void checkMac(ByteBuffer tag) throws AEADBadTagException {
    if (mode != Cipher.DECRYPT_MODE) {
      throw new IllegalStateException("a sealing AesGcm makes a GMAC, it does not check one");
    }
    if (tag.remaining() != TAG_LENGTH) {
      throw new AEADBadTagException("a GMAC tag of " + tag.remaining() + " bytes");
    }
    byte[] t = new byte[TAG_LENGTH];
    tag.get(t);
    try {
      // A record of no ciphertext: the JDK compares the tag in constant time and returns nothing.
      cipher.doFinal(t);
    } catch (AEADBadTagException e) {
      throw e;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to check a GMAC", e);
    }
  }

  @Override
  public void abandon() {
    // The Cipher holds nothing outside the heap, and its next init starts afresh.
  }

  @Override
  public void open(long seq, ByteBuffer aad, ByteBuffer record, ByteBuffer dst) throws AEADBadTagException {
    try {
      start(seq, aad);
      // The JDK holds the whole record until its tag checks out, so dst sees nothing otherwise.
      cipher.doFinal(record, dst);
    } catch (AEADBadTagException e) {
      throw e;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM failed to open a record", e);
    }
  }
}
