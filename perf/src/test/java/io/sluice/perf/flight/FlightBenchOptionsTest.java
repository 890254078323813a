package io.sluice.perf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class FlightBenchOptionsTest {
  @Test
  void defaultsMoveTwoGibibytesInThreeRoundsAfterAWarmUp() {
    FlightBenchOptions o = FlightBenchOptions.parse();
    assertEquals(2048L << 20, o.tableBytes());
    assertEquals(65_536, o.batchRows());
    assertEquals(3, o.rounds());
    assertEquals(List.of("get", "put"), o.operations());
    assertTrue(o.warmup());
    assertFalse(o.quick());
    assertEquals(Path.of("perf/results/flight.json"), o.out());
  }

  @Test
  void quickIsSmallAndNeverWritesTheResultsFile() {
    FlightBenchOptions o = FlightBenchOptions.parse("--quick");
    assertTrue(o.quick());
    assertEquals(1, o.rounds());
    assertFalse(o.warmup());
    assertEquals(Path.of("perf/target/flight-quick.json"), o.out());
    assertEquals(8L << 20, FlightBenchOptions.parse("--quick", "--size-mb", "8").tableBytes());
  }

  @Test
  void sizeRoundsAndOut() {
    FlightBenchOptions o = FlightBenchOptions.parse("--size-mb", "512", "--rounds", "5", "--out", "x/f.json");
    assertEquals(512L << 20, o.tableBytes());
    assertEquals(5, o.rounds());
    assertEquals(Path.of("x/f.json"), o.out());
    assertEquals(List.of("get", "put"), FlightBenchOptions.parse("--operations", "put,get").operations());
    assertEquals(List.of("put"), FlightBenchOptions.parse("--operations", "put").operations());
  }

  @Test
  void helpListsEveryOption() {
    Cli.HelpRequested help = assertThrows(Cli.HelpRequested.class, () -> FlightBenchOptions.parse("--help"));
    for (String option : List.of("--quick", "--size-mb", "--rounds", "--operations", "--out", "--help")) {
      assertTrue(help.usage().contains(option), help.usage());
    }
  }

  @Test
  void badArgumentsNameThemselves() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> FlightBenchOptions.parse("--size-mb", "lots"))
        .getMessage().contains("--size-mb"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> FlightBenchOptions.parse("--rounds", "0"))
        .getMessage().contains("--rounds"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> FlightBenchOptions.parse("--rounds"))
        .getMessage().contains("Missing required parameter for option '--rounds'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> FlightBenchOptions.parse("--operations", "exchange"))
        .getMessage().contains("exchange"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> FlightBenchOptions.parse("--fast"))
        .getMessage().contains("--fast"));
  }
}
