package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of the test class path in a JVM of its own: for what a JVM decides once (its
 * first open, its choice of curves). The child must bound its own waits; its exit has a deadline.
 */
public final class FreshJvm {
  private static final long DEADLINE_SECONDS = 90;

  private FreshJvm() {}

  /** The child's standard output, as lines, once it exited with status 0. */
  public static List<String> run(List<String> jvmOptions, Class<?> main, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the child did not exit: " + text);
    }
    assertEquals(0, p.exitValue(), text);
    return List.of(text.split("\n"));
  }
}
