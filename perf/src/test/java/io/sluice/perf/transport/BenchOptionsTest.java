package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {
  @Test
  void defaultsMeasureBothProvidersIntoTheResultsFolder() {
    BenchOptions o = BenchOptions.parse();
    assertEquals(List.of("tcp", "tcp-aes", "tcp-aes-jdk", "shm"), o.providers());
    assertEquals(List.of(64 << 10, 1 << 20, 8 << 20), o.blockSizes());
    assertEquals(List.of(1, 8), o.depths());
    assertEquals(4096, o.latencyBytes());
    assertEquals(Path.of("perf/results/transport.json"), o.out());
    assertFalse(o.quick());
    assertEquals(64 << 20, o.destinationBytes());
  }

  @Test
  void quickAndProvidersAndOut() {
    BenchOptions o = BenchOptions.parse("--quick", "--providers", "shm", "--out", "x/y.json");
    assertTrue(o.quick());
    assertEquals(List.of("shm"), o.providers());
    assertEquals(Path.of("x/y.json"), o.out());
    assertTrue(o.measure().compareTo(BenchOptions.parse().measure()) < 0);
    assertEquals(Path.of("perf/target/transport-quick.json"), BenchOptions.parse("--quick").out(),
        "a smoke run never replaces the real results");
  }

  @Test
  void badArgumentsSayWhatIsWrong() {
    assertMessage("Unknown option: '--fast'", "--fast");
    assertMessage("Missing required parameter for option '--out'", "--out");
    assertMessage("unknown provider 'verbs'", "--providers", "tcp,verbs");
    assertMessage("given twice", "--providers", "tcp,tcp");
  }

  @Test
  void helpListsEveryOption() {
    Cli.HelpRequested help = assertThrows(Cli.HelpRequested.class, () -> BenchOptions.parse("--help"));
    for (String option : List.of("--quick", "--providers", "--out", "--help")) {
      assertTrue(help.usage().contains(option), help.usage());
    }
  }

  private static void assertMessage(String fragment, String... args) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse(args));
    assertTrue(e.getMessage().contains(fragment), e.getMessage());
  }
}
