package io.sluice.transport.verbs.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Finds the libdisni.so to load: the file named by the system property
 * {@value #LIBRARY_PROPERTY} if set, else the copy packaged in this module's jar at
 * {@link #resourceName()}, extracted once into a private temporary directory that is
 * removed when the JVM exits.
 *
 * <p>Not thread safe on its own; {@link DisniRuntime} calls it once under its lock.
 */
final class LibraryFile {

  /** System property naming an existing libdisni.so to use instead of the packaged one. */
  static final String LIBRARY_PROPERTY = "sluice.disni.library";

  private LibraryFile() {}

  /** The resource path of the packaged library for this platform. */
  static String resourceName() {
    return "native/" + platform() + "/libdisni.so";
  }

  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String osPart = os.startsWith("linux") ? "linux" : os.replace(' ', '-');
    String archPart = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch;
    return osPart + "-" + archPart;
  }

  /**
   * Returns the absolute path of a loadable libdisni.so.
   *
   * @throws UnsatisfiedLinkError if the property names a missing file, or no library is
   *     packaged for this platform (the module was built without the verbs headers)
   * @throws UncheckedIOException if extraction fails
   */
  static Path locate(ClassLoader resources) {
    String configured = System.getProperty(LIBRARY_PROPERTY, "");
    if (!configured.isEmpty()) {
      Path path = Path.of(configured).toAbsolutePath();
      if (!Files.isRegularFile(path)) {
        throw new UnsatisfiedLinkError(
            LIBRARY_PROPERTY + "=" + configured + " does not name a readable file");
      }
      return path;
    }
    String resource = resourceName();
    try (InputStream in = resources.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "no " + resource + " in the sluice-transport-verbs jar: it was built without gcc or the "
                + "libibverbs/librdmacm headers (see transport-verbs/install-build-deps), or this "
                + "platform (" + platform() + ") is not supported");
      }
      Path dir =
          Files.createTempDirectory(
              "sluice-disni-", PosixFilePermissions.asFileAttribute(
                  PosixFilePermissions.fromString("rwx------")));
      Path file = dir.resolve("libdisni.so");
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      // Deletion runs in reverse registration order: the file first, then its directory.
      dir.toFile().deleteOnExit();
      file.toFile().deleteOnExit();
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract " + resource, e);
    }
  }
}
