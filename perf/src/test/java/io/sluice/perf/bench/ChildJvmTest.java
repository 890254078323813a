package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ChildJvmTest {
  /** A child that announces a value from its environment, answers commands, and stops at end of input. */
  public static final class Echo {
    public static void main(String[] args) throws IOException {
      if (args.length > 0 && args[0].equals("fail")) {
        System.exit(3);
      }
      if (args.length > 0 && args[0].equals("silent")) {
        System.in.read();
        return;
      }
      System.out.println("noise");
      System.out.println("ready " + System.getenv("CHILD_JVM_TEST"));
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        System.out.println("got " + line);
        System.out.flush();
      }
    }
  }

  private static ChildJvm.Command echo(String... args) {
    return new ChildJvm.Command("test child", Echo.class, List.of("-Xmx64m"), List.of(args),
        Map.of("CHILD_JVM_TEST", "42"), Duration.ofSeconds(20));
  }

  private static Optional<String> after(String prefix, String line) {
    return line.startsWith(prefix) ? Optional.of(line.substring(prefix.length())) : Optional.empty();
  }

  @Test
  @Timeout(60)
  void readsTheAnnouncementAnswersCommandsAndStopsAtEndOfInput() throws IOException {
    try (ChildJvm child = ChildJvm.start(echo())) {
      assertEquals("42", child.await(l -> after("ready ", l), child.deadlineFromStart(Duration.ofSeconds(30)),
          "starting"));
      child.send("hello");
      assertEquals("hello", child.await(l -> after("got ", l), ChildJvm.deadlineFromNow(Duration.ofSeconds(10)),
          "answering"));
    }
  }

  @Test
  @Timeout(60)
  void aChildThatExitsEarlySaysSoWithItsStatus() throws IOException {
    ChildJvm child = ChildJvm.start(echo("fail"));
    IOException e = assertThrows(IOException.class, () -> child.await(l -> after("ready ", l),
        child.deadlineFromStart(Duration.ofSeconds(30)), "starting"));
    assertTrue(e.getMessage().contains("test child exited while starting (exit status 3)"), e.getMessage());
    IOException closed = assertThrows(IOException.class, child::close);
    assertTrue(closed.getMessage().contains("status 3"), closed.getMessage());
  }

  @Test
  @Timeout(60)
  void aSilentChildMissesItsDeadline() throws IOException {
    try (ChildJvm child = ChildJvm.start(echo("silent"))) {
      IOException e = assertThrows(IOException.class, () -> child.await(l -> after("ready ", l),
          ChildJvm.deadlineFromNow(Duration.ofMillis(500)), "starting"));
      assertTrue(e.getMessage().contains("did not answer in time while starting"), e.getMessage());
    }
  }
}
