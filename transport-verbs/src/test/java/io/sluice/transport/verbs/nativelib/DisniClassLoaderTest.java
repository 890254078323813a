package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Child-first definition of chosen classes; no native code involved. */
class DisniClassLoaderTest {

  private final DisniClassLoader loader = new DisniClassLoader(getClass().getClassLoader(),
      Path.of("/opt/lib/libdisni.so"), DisniRuntime.ISOLATED_PREFIXES, DisniRuntime.SHARED_PREFIXES);

  @Test
  void isolationFollowsPrefixesWithSharedExceptions() {
    assertTrue(loader.isIsolated("com.ibm.disni.RdmaEndpoint"));
    assertTrue(loader.isIsolated("io.sluice.transport.verbs.diag.ReadCheck"));
    assertFalse(loader.isIsolated("io.sluice.transport.verbs.nativelib.DisniTask"));
    assertFalse(loader.isIsolated("io.sluice.transport.Transport"));
    assertFalse(loader.isIsolated("java.lang.String"));
  }

  @Test
  void isolatedClassesAreDefinedAgainAndOthersDelegated() throws ClassNotFoundException {
    Class<?> own = loader.loadClass("com.ibm.disni.verbs.IbvSge");
    assertSame(loader, own.getClassLoader());
    assertNotSame(com.ibm.disni.verbs.IbvSge.class, own);
    assertSame(loader.loadClass("com.ibm.disni.verbs.IbvSge"), own);
    assertSame(DisniTask.class, loader.loadClass(DisniTask.class.getName()));
    assertEquals("com.ibm.disni.verbs", own.getPackageName());
    assertTrue(own.getProtectionDomain().getCodeSource().getLocation().toString().contains("disni"));
  }

  @Test
  void onlyTheDisniLibraryIsMapped() {
    assertEquals("/opt/lib/libdisni.so", loader.findLibrary("disni"));
    assertEquals(null, loader.findLibrary("c"));
  }

  @Test
  void missingIsolatedClassIsReported() {
    assertThrows(ClassNotFoundException.class, () -> loader.loadClass("com.ibm.disni.DoesNotExist"));
  }
}
