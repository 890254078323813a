package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Whether this build packaged libdisni.so (it is skipped without the verbs headers). */
final class Packaging {

  static final String NOT_PACKAGED =
      "libdisni.so was not built (no gcc or libibverbs/librdmacm headers; see transport-verbs/install-build-deps)";

  private Packaging() {}

  static boolean libraryPackaged() {
    return Packaging.class.getClassLoader().getResource(LibraryFile.resourceName()) != null;
  }

  /**
   * The JVM's DiSNI runtime for a test that needs the library: skips the test where the build
   * packaged none, fails it where the packaged library does not load.
   */
  static DisniRuntime loadedRuntime() {
    assumeTrue(libraryPackaged(), NOT_PACKAGED);
    assertTrue(DisniRuntime.isAvailable(), () -> "not loadable: " + DisniRuntime.unavailabilityCause());
    return DisniRuntime.get();
  }
}
