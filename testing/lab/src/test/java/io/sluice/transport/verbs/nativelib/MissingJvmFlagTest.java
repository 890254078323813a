package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JVM started without the export DiSNI needs is told exactly which flag to add. */
class MissingJvmFlagTest {

  @Test
  void unavailabilityNamesTheFlag(@TempDir Path dir) throws IOException, InterruptedException {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // Its output goes to a file, so the wait for the child has a deadline even if it hangs.
    Path log = dir.resolve("child.log");
    Process child = new ProcessBuilder(List.of(java, "-cp", classPath(),
        DisniCheck.class.getName(), "loopback", "127.0.0.1", "1"))
        .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean exited = child.waitFor(120, TimeUnit.SECONDS);
    if (!exited) {
      child.destroyForcibly();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertTrue(exited, () -> "child JVM did not finish: " + output);
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
