package io.sluice.transport.verbs.nativelib;

/** Whether this build packaged libdisni.so (it is skipped without the verbs headers). */
final class Packaging {

  static final String NOT_PACKAGED =
      "libdisni.so was not built (no gcc or libibverbs/librdmacm headers; see transport-verbs/install-build-deps)";

  private Packaging() {}

  static boolean libraryPackaged() {
    return Packaging.class.getClassLoader().getResource(LibraryFile.resourceName()) != null;
  }
}
