package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** A JVM started without the export DiSNI needs is told exactly which flag to add. */
class MissingJvmFlagTest {

  @Test
  void unavailabilityNamesTheFlag() throws IOException, InterruptedException {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(List.of(java, "-cp", classPath(),
        DisniCheck.class.getName(), "loopback", "127.0.0.1", "1"))
        .redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(120, TimeUnit.SECONDS), "child JVM did not finish");
    assertEquals(2, child.exitValue(), output);
    assertTrue(output.contains(DisniRuntime.REQUIRED_JVM_FLAG), output);
  }

  /** Where this module's classes and its lab programs, DiSNI, slf4j and the transport API were loaded from. */
  private static String classPath() {
    return Stream.of(DisniRuntime.class, DisniCheck.class, com.ibm.disni.RdmaEndpoint.class, org.slf4j.LoggerFactory.class,
            io.sluice.transport.TransportException.class)
        .map(c -> {
          try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
          } catch (URISyntaxException e) {
            throw new AssertionError(e);
          }
        })
        .distinct()
        .collect(Collectors.joining(File.pathSeparator));
  }
}
