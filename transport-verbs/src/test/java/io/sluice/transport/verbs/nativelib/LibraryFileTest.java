package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LibraryFileTest {
  /** The property as the JVM was started with it ({@code -Dsluice.disni.library=...}), if at all. */
  private String configured;

  /** Every case starts without the property; those about it set their own. */
  @BeforeEach
  void saveProperty() {
    configured = System.getProperty(LibraryFile.LIBRARY_PROPERTY);
    System.clearProperty(LibraryFile.LIBRARY_PROPERTY);
  }

  /** Puts the property back as it was: the tests that load the library after this one read it. */
  @AfterEach
  void restoreProperty() {
    if (configured == null) {
      System.clearProperty(LibraryFile.LIBRARY_PROPERTY);
    } else {
      System.setProperty(LibraryFile.LIBRARY_PROPERTY, configured);
    }
  }

  @Test
  void resourceNameNamesThePlatform() {
    assumeTrue(System.getProperty("os.name").startsWith("Linux") && System.getProperty("os.arch").equals("amd64"));
    assertEquals("native/linux-x86_64/libdisni.so", LibraryFile.resourceName());
  }

  @Test
  void missingPackagedLibraryExplainsHowToBuildIt() {
    try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
      UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class, () -> LibraryFile.locate(empty));
      assertTrue(e.getMessage().contains("install-build-deps"), e.getMessage());
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void configuredPathMustExist(@TempDir Path dir) {
    System.setProperty(LibraryFile.LIBRARY_PROPERTY, dir.resolve("nope.so").toString());
    UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
        () -> LibraryFile.locate(getClass().getClassLoader()));
    assertTrue(e.getMessage().contains(LibraryFile.LIBRARY_PROPERTY), e.getMessage());
  }

  @Test
  void configuredPathWinsOverThePackagedCopy(@TempDir Path dir) throws java.io.IOException {
    Path file = Files.writeString(dir.resolve("libdisni.so"), "not really a library");
    System.setProperty(LibraryFile.LIBRARY_PROPERTY, file.toString());
    assertEquals(file.toAbsolutePath(), LibraryFile.locate(getClass().getClassLoader()));
  }

  @Test
  void packagedLibraryIsExtractedToAPrivateFile() throws java.io.IOException {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    Path file = LibraryFile.locate(getClass().getClassLoader());
    assertTrue(Files.size(file) > 0);
    assertEquals("rwx------",
        java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
  }
}
