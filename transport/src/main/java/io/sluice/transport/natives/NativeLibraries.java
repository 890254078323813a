package io.sluice.transport.natives;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Optional;

/**
 * Loads the project's own JNI libraries, which the jar carries under {@code
 * /native/<platform>/} when the build found gcc and the JNI headers (transport/build-native):
 * {@code libsluice-crypto.so} and {@code libsluice-shm.so}. A system property may name another build
 * of a library. Each library is loaded once, by the class that owns its native methods, from a
 * static initializer. Stateless; thread safe.
 */
public final class NativeLibraries {
  private NativeLibraries() {}

  /**
   * Loads {@code name} (e.g. {@code libsluice-shm.so}) from the file the system property {@code
   * property} names, or else from the jar.
   *
   * @return empty once loaded, or why it is not
   */
  public static Optional<String> load(String name, String property) {
    try {
      String path = System.getProperty(property);
      if (path != null && !path.isEmpty()) {
        System.load(Path.of(path).toAbsolutePath().toString());
        return Optional.empty();
      }
      return loadFromJar(name);
    } catch (IOException | LinkageError | SecurityException e) {
      return Optional.of("cannot load " + name + ": " + e);
    }
  }

  private static Optional<String> loadFromJar(String name) throws IOException {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "");
    String platform;
    if (!os.startsWith("linux")) {
      return Optional.of(name + " is built for Linux only, not " + os);
    } else if (arch.equals("amd64") || arch.equals("x86_64")) {
      platform = "linux-x86_64";
    } else if (arch.equals("aarch64")) {
      platform = "linux-aarch64";
    } else {
      return Optional.of(name + " is not built for " + arch);
    }
    String resource = "/native/" + platform + "/" + name;
    try (InputStream in = NativeLibraries.class.getResourceAsStream(resource)) {
      if (in == null) {
        return Optional.of("this build carries no " + resource + " (built without gcc or JNI headers)");
      }
      Path dir = Files.createTempDirectory("sluice-native");
      Path file = dir.resolve(name);
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      System.load(file.toString());
      // Loaded libraries stay mapped; the file's name is no longer needed.
      Files.deleteIfExists(file);
      Files.deleteIfExists(dir);
    }
    return Optional.empty();
  }
}
