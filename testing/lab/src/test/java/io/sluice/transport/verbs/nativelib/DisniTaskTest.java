package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lab's checks run inside the DiSNI runtime's loader: {@link DisniRuntime#newInstance}
 * defines them there, refuses classes outside it, and a check validates its arguments before
 * any RDMA work. Without a device the data path fails with librdmacm's own error.
 */
class DisniTaskTest {

  private static DisniRuntime runtime;

  @BeforeAll
  static void load() {
    runtime = Packaging.loadedRuntime();
  }

  @Test
  void labChecksAreDefinedByTheRuntimeLoader() {
    assertTrue(runtime.definesClass("io.sluice.transport.verbs.diag.ReadCheck"));
  }

  @Test
  void newInstanceCreatesInsideTheLoaderAndRejectsOutsiders() {
    DisniTask check = runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", DisniTask.class);
    assertSame(runtime.classLoader(), check.getClass().getClassLoader());
    assertThrows(IllegalArgumentException.class,
        () -> runtime.newInstance(DisniCheck.class.getName(), DisniTask.class));
    assertThrows(IllegalArgumentException.class,
        () -> runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", Supplier.class));
    assertThrows(IllegalStateException.class,
        () -> runtime.newInstance("io.sluice.transport.verbs.NoSuchClass", DisniTask.class));
  }

  @Test
  void dataPathWithoutDeviceFailsWithTheLibrdmacmError() {
    assumeTrue(runtime.deviceCount() <= 0, "an RDMA device is present");
    DisniTask check = runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", DisniTask.class);
    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
    int status = check.run(java.util.List.of("readpath", "127.0.0.1", "19196", "4096", "10"),
        new java.io.PrintStream(text, true));
    assertEquals(1, status);
    assertTrue(text.toString().contains("rdma_create_event_channel failed"), text.toString());
  }

  @Test
  void checkArgumentsAreValidatedBeforeAnyRdmaWork() {
    DisniTask check = runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", DisniTask.class);
    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
    int status = check.run(java.util.List.of("sideways", "127.0.0.1", "1"), new java.io.PrintStream(text, true));
    assertEquals(1, status);
    assertTrue(text.toString().contains("unknown mode sideways"), text.toString());
  }
}
