package io.sluice.transport.crypto;

import io.sluice.transport.natives.NativeLibraries;
import java.nio.ByteBuffer;
import java.util.Optional;
import javax.crypto.AEADBadTagException;

/**
 * AES-GCM through OpenSSL's libcrypto (AES-NI and carry-less multiply from the first byte), by the
 * project's own small JNI library {@code libsluice-crypto.so} (transport/src/main/c/aes_gcm.c),
 * which the jar carries and which opens libcrypto 3 or 1.1 at run time. Direct buffers are passed
 * by address and heap arrays pinned: nothing is copied.
 *
 * <p>No OpenSSL context outlives a record: a record is opened in one native call that makes and
 * frees its own, a sealed record's context lives from {@link #startSeal} to {@link #finishSeal},
 * and a GMAC's from {@link #startMac} to {@link #finishMac} or {@link #checkMac} (or {@link
 * #abandon}). So nothing native waits for the garbage collector, and no thread of its own is
 * needed to free it. A GMAC's data goes to OpenSSL by address, as associated data: nothing of a
 * READ_RESPONSE's body is copied.
 *
 * <p>{@link #isAvailable()} says whether the library and libcrypto loaded, {@link
 * #unavailabilityCause()} why not. {@code -Dsluice.crypto.library=/path/libsluice-crypto.so} uses
 * another build of the library. Not thread safe.
 */
public final class OpenSslAesGcm extends AesGcm {
  /** The system property naming another build of the library. */
  public static final String LIBRARY_PROPERTY = "sluice.crypto.library";
  private final byte[] key;
  private final boolean encrypt;
  private final byte[] aad = new byte[64];
  /** The context of the record being sealed, 0 between records. */
  private long sealing;
  /** The context of the GMAC being computed, 0 between GMACs. */
  private long macing;

  private OpenSslAesGcm(byte[] key, boolean encrypt) {
    this.key = key.clone();
    this.encrypt = encrypt;
  }

  /** Whether the library and libcrypto are loaded. */
  public static boolean isAvailable() {
    return Library.CAUSE == null;
  }

  /** Why {@link #isAvailable()} is false, if it is. */
  public static Optional<String> unavailabilityCause() {
    return Optional.ofNullable(Library.CAUSE);
  }

  /** libcrypto's own version text, e.g. "OpenSSL 3.0.13 30 Jan 2024". */
  public static String openSslVersion() {
    ensureAvailable();
    return version();
  }

  /** One direction under {@code key}. @throws IllegalStateException if unavailable */
  static OpenSslAesGcm create(byte[] key, boolean encrypt) {
    ensureAvailable();
    if (key.length != KEY_LENGTH) {
      throw new IllegalArgumentException("AES-128 takes a key of " + KEY_LENGTH + " bytes, not " + key.length);
    }
    return new OpenSslAesGcm(key, encrypt);
  }

  private static void ensureAvailable() {
    if (Library.CAUSE != null) {
      throw new IllegalStateException("OpenSSL AES-GCM is unavailable: " + Library.CAUSE);
    }
  }

  @Override
  public void startSeal(long seq, ByteBuffer aadBuffer) {
    if (!encrypt) {
      throw new IllegalStateException("an opening AesGcm does not seal");
    }
    int n = aadBuffer.remaining();
    if (n > aad.length) {
      throw new IllegalArgumentException("associated data of " + n + " bytes; at most " + aad.length);
    }
    aadBuffer.get(aad, 0, n);
    endSealing(); // a record abandoned half-way (its caller failed) leaves its context here
    sealing = newContext(key, true);
    if (sealing == 0) {
      throw new IllegalStateException("OpenSSL refused an AES-128-GCM context");
    }
    if (!start(sealing, seq, aad, n)) {
      endSealing();
      throw new IllegalStateException("OpenSSL failed to start a record");
    }
  }

  private void endSealing() {
    if (sealing != 0) {
      freeContext(sealing);
      sealing = 0;
    }
  }

  private long sealingContext() {
    if (sealing == 0) {
      throw new IllegalStateException("no record is being sealed (startSeal first)");
    }
    return sealing;
  }

  @Override
  public void seal(ByteBuffer in, ByteBuffer out) {
    int n = in.remaining();
    if (out.remaining() < n) {
      throw new IllegalArgumentException(out.remaining() + " bytes of room for " + n + " bytes of ciphertext");
    }
    int written = update(sealingContext(), memory(in), offset(in), n, memory(out), offset(out));
    if (written != n) {
      endSealing();
      throw new IllegalStateException("OpenSSL failed to seal a record");
    }
    in.position(in.position() + n);
    out.position(out.position() + n);
  }

  @Override
  public void finishSeal(ByteBuffer last, ByteBuffer out) {
    if (last != null && last.hasRemaining()) {
      seal(last, out);
    }
    if (out.remaining() < TAG_LENGTH) {
      throw new IllegalArgumentException(out.remaining() + " bytes of room for a tag of " + TAG_LENGTH);
    }
    int written;
    try {
      written = finishSeal(sealingContext(), memory(out), offset(out));
    } finally {
      endSealing();
    }
    if (written != TAG_LENGTH) {
      throw new IllegalStateException("OpenSSL failed to finish a record");
    }
    out.position(out.position() + TAG_LENGTH);
  }

  @Override
  public void startMac(long seq) {
    endMac(); // a GMAC abandoned half-way (its caller failed) leaves its context here
    macing = newContext(key, encrypt);
    if (macing == 0) {
      throw new IllegalStateException("OpenSSL refused an AES-128-GCM context");
    }
    if (!start(macing, seq, aad, 0)) {
      endMac();
      throw new IllegalStateException("OpenSSL failed to start a GMAC");
    }
  }

  private void endMac() {
    if (macing != 0) {
      freeContext(macing);
      macing = 0;
    }
  }

  private long macContext() {
    if (macing == 0) {
      throw new IllegalStateException("no GMAC is being computed (startMac first)");
    }
    return macing;
  }

  @Override
  public void macMore(ByteBuffer data) {
    int n = data.remaining();
    if (n > 0 && !addAad(macContext(), memory(data), offset(data), n)) {
      endMac();
      throw new IllegalStateException("OpenSSL failed to take a GMAC's data");
    }
    data.position(data.limit());
  }

  @Override
  public void finishMac(ByteBuffer out) {
    if (!encrypt) {
      throw new IllegalStateException("an opening AesGcm checks a GMAC, it does not make one");
    }
    if (out.remaining() < TAG_LENGTH) {
      throw new IllegalArgumentException(out.remaining() + " bytes of room for a tag of " + TAG_LENGTH);
    }
    int written;
    try {
      written = finishSeal(macContext(), memory(out), offset(out));
    } finally {
      endMac();
    }
    if (written != TAG_LENGTH) {
      throw new IllegalStateException("OpenSSL failed to finish a GMAC");
    }
    out.position(out.position() + TAG_LENGTH);
  }

  @Override
  public void checkMac(ByteBuffer tag) throws AEADBadTagException {
    if (encrypt) {
      throw new IllegalStateException("a sealing AesGcm makes a GMAC, it does not check one");
    }
    if (tag.remaining() != TAG_LENGTH) {
      endMac();
      throw new AEADBadTagException("a GMAC tag of " + tag.remaining() + " bytes");
    }
    byte[] t = new byte[TAG_LENGTH];
    tag.get(t);
    int result;
    try {
      result = checkTag(macContext(), t);
    } finally {
      endMac();
    }
    if (result == 0) {
      throw new AEADBadTagException("tag mismatch");
    }
    if (result != 1) {
      throw new IllegalStateException("OpenSSL failed to check a GMAC");
    }
  }

  @Override
  public void abandon() {
    endSealing();
    endMac();
  }

  @Override
  public void open(long seq, ByteBuffer aadBuffer, ByteBuffer record, ByteBuffer dst) throws AEADBadTagException {
    int n = record.remaining() - TAG_LENGTH;
    if (n < 0) {
      throw new AEADBadTagException("a record of " + record.remaining() + " bytes is shorter than its tag");
    }
    if (dst.remaining() < n) {
      throw new IllegalArgumentException(dst.remaining() + " bytes of room for " + n + " bytes of plain text");
    }
    int a = aadBuffer.remaining();
    if (a > aad.length) {
      throw new IllegalArgumentException("associated data of " + a + " bytes; at most " + aad.length);
    }
    aadBuffer.get(aad, 0, a);
    if (encrypt) {
      throw new IllegalStateException("a sealing AesGcm does not open");
    }
    int result = open(key, seq, aad, a, memory(record), offset(record), n, memory(dst), offset(dst));
    if (result == 0) {
      throw new AEADBadTagException("tag mismatch");
    }
    if (result != 1) {
      throw new IllegalStateException("OpenSSL failed to open a record");
    }
    record.position(record.limit());
    dst.position(dst.position() + n);
  }

  /** What the native side addresses: the direct buffer itself, or a heap buffer's array. */
  private static Object memory(ByteBuffer b) {
    if (b.isDirect()) {
      return b;
    }
    if (!b.hasArray()) {
      throw new IllegalArgumentException("a read-only heap buffer cannot be passed to OpenSSL");
    }
    return b.array();
  }

  private static int offset(ByteBuffer b) {
    return b.isDirect() ? b.position() : b.arrayOffset() + b.position();
  }

  /** Loads the library once, on first use; {@link #CAUSE} is null when it and libcrypto loaded. */
  private static final class Library {
    static final String CAUSE = load();

    private static String load() {
      Optional<String> missing = NativeLibraries.load("libsluice-crypto.so", LIBRARY_PROPERTY);
      if (missing.isPresent()) {
        return missing.get();
      }
      try {
        return bind();
      } catch (LinkageError e) {
        return "cannot bind libsluice-crypto.so: " + e;
      }
    }
  }

  private static native String bind();

  private static native String version();

  private static native long newContext(byte[] key, boolean encrypt);

  private static native void freeContext(long context);

  private static native boolean start(long context, long seq, byte[] aad, int aadLength);

  private static native int update(long context, Object in, int inOffset, int length, Object out, int outOffset);

  private static native int finishSeal(long context, Object out, int outOffset);

  private static native boolean addAad(long context, Object in, int inOffset, int length);

  private static native int checkTag(long context, byte[] tag);

  private static native int open(byte[] key, long seq, byte[] aad, int aadLength, Object in, int inOffset,
      int length, Object out, int outOffset);
}
