package io.sluice.transport.shm;

import io.sluice.transport.natives.NativeLibraries;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Sealed shared memory through the project's JNI library {@code libsluice-shm.so}
 * (transport/src/main/c/sealed_memory.c): an arena region is a memfd ({@code memfd_create} with
 * {@code MFD_ALLOW_SEALING}) of a fixed size, sealed with {@code F_SEAL_SHRINK | F_SEAL_GROW |
 * F_SEAL_SEAL}, so that no process can cut it short under a reader's mapping and no process can
 * lift the seals; its owner still writes it. Readers reopen it through {@code /proc/<owner
 * pid>/fd/<n>} and check its seals ({@link #seals}) before they map it.
 *
 * <p>{@link #isAvailable()} says whether the library loaded and the kernel makes sealed memfds
 * (Linux 3.17 and later), {@link #unavailabilityCause()} why not: then arena regions are files in
 * the arena folder. {@code -Dsluice.shm.library=/path/libsluice-shm.so} uses another build of the
 * library. Stateless; thread safe.
 */
final class SealedMemory {
  /** The system property naming another build of the library. */
  static final String LIBRARY_PROPERTY = "sluice.shm.library";
  /** fcntl.h: the seals this class reads and sets. */
  static final int F_SEAL_SEAL = 0x1;
  static final int F_SEAL_SHRINK = 0x2;
  static final int F_SEAL_GROW = 0x4;
  /** What a memfd's name reads as through /proc: {@code /memfd:<name> (deleted)}. */
  static final String PROC_NAME_PREFIX = "/memfd:";

  private SealedMemory() {}

  static boolean isAvailable() {
    return Library.CAUSE == null;
  }

  static Optional<String> unavailabilityCause() {
    return Optional.ofNullable(Library.CAUSE);
  }

  /**
   * A new memfd named {@code name} of {@code length} bytes, all of them given now, sealed against
   * any change of size. The caller owns the descriptor and closes it with {@link #close}.
   *
   * @throws IOException when the kernel refuses (no memory, no sealing, too many descriptors)
   */
  static int create(String name, long length) throws IOException {
    ensureAvailable();
    return check(create0(name, length), "cannot create a sealed memfd of " + length + " bytes");
  }

  /**
   * Opens {@code path} for reading, following links ({@code /proc/<pid>/fd/<n>} is one); refuses
   * anything but a regular file. The caller closes the descriptor with {@link #close}.
   */
  static int openForReading(Path path) throws IOException {
    ensureAvailable();
    return check(openForReading0(path.toString()), "cannot open " + path);
  }

  /** The seals of descriptor {@code fd}, {@code F_GET_SEALS}. */
  static int seals(int fd) throws IOException {
    ensureAvailable();
    return check(seals0(fd), "cannot read the seals of descriptor " + fd);
  }

  static void close(int fd) throws IOException {
    ensureAvailable();
    check(close0(fd), "cannot close descriptor " + fd);
  }

  /** The path by which this process's descriptor {@code fd} is reopened: by itself, or by a peer with this process's pid. */
  static Path procPath(long pid, int fd) {
    return Path.of("/proc/" + pid + "/fd/" + fd);
  }

  private static int check(int result, String what) throws IOException {
    if (result < 0) {
      throw new IOException(what + ": " + errorText(-result));
    }
    return result;
  }

  private static void ensureAvailable() {
    if (Library.CAUSE != null) {
      throw new IllegalStateException("sealed shared memory is unavailable: " + Library.CAUSE);
    }
  }

  private static final class Library {
    static final String CAUSE = load();

    private static String load() {
      Optional<String> missing = NativeLibraries.load("libsluice-shm.so", LIBRARY_PROPERTY);
      if (missing.isPresent()) {
        return missing.get();
      }
      try {
        // One sealed memfd of no bytes: the kernel makes and seals them, or says why not.
        int fd = create0("sluice-probe", 0);
        if (fd < 0) {
          return "the kernel makes no sealed memfd: " + errorText(-fd);
        }
        close0(fd);
        return null;
      } catch (LinkageError e) {
        return "cannot bind libsluice-shm.so: " + e;
      }
    }
  }

  private static native int create0(String name, long length);

  private static native int openForReading0(String path);

  private static native int seals0(int fd);

  private static native int close0(int fd);

  private static native String errorText(int errno);
}
