package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * rdma_cm connect, SEND/RECV and RDMA READ through DiSNI and the project's library, both
 * sides in this JVM. Needs an RDMA device and its IP address in
 * {@code -Dsluice.rdma.address=...}; skipped otherwise (the SoftRoCE lab runs the same
 * check as a program: testing/softroce/disni-check).
 */
class ReadCheckOnDeviceTest {

  @Test
  void loopbackReadThroughDisni() {
    String address = System.getProperty("sluice.rdma.address", "");
    assumeTrue(!address.isEmpty(), "set -Dsluice.rdma.address to an address of an RDMA device");
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    DisniRuntime runtime = DisniRuntime.get();
    assumeTrue(runtime.deviceCount() > 0, "no RDMA device");
    DisniTask check = runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", DisniTask.class);
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    int status = check.run(List.of("loopback", address, "19192", "262144", "120"),
        new PrintStream(text, true, StandardCharsets.UTF_8));
    assertEquals(0, status, text.toString(StandardCharsets.UTF_8));
  }
}
