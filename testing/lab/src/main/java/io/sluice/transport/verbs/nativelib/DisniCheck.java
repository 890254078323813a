package io.sluice.transport.verbs.nativelib;

import java.util.Arrays;
import java.util.List;

/**
 * Command line check that DiSNI with the project's libdisni.so works on this machine:
 * loads the library, lists devices, and runs {@code io.sluice.transport.verbs.diag.ReadCheck}
 * (rdma_cm connect, SEND/RECV, RDMA READ).
 *
 * <pre>
 * java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -cp ... \
 *     io.sluice.transport.verbs.nativelib.DisniCheck loopback|server|client|failures|readpath|channel HOST PORT [BYTES]
 * </pre>
 *
 * Exit status 0 means every step passed; 2 means the library is unavailable.
 */
public final class DisniCheck {

  private DisniCheck() {}

  public static void main(String[] args) {
    List<String> arguments = Arrays.asList(args);
    if (arguments.size() < 3) {
      System.err.println("usage: DisniCheck loopback|server|client|failures|readpath|channel HOST PORT [BYTES] [TIMEOUT_SECONDS]");
      System.exit(64);
    }
    if (!DisniRuntime.isAvailable()) {
      System.out.println("DISNI-CHECK unavailable: " + DisniRuntime.unavailabilityCause().orElseThrow());
      System.exit(2);
    }
    DisniRuntime runtime = DisniRuntime.get();
    System.out.println("DISNI-CHECK library " + runtime.libraryPath() + ", devices " + runtime.deviceCount());
    DisniTask check = runtime.newInstance("io.sluice.transport.verbs.diag.ReadCheck", DisniTask.class);
    int status = check.run(arguments, System.out);
    System.out.println("DISNI-CHECK " + arguments.get(0) + (status == 0 ? " PASS" : " FAIL status " + status));
    System.exit(status);
  }
}
