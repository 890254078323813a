package io.sluice.perf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.perf.bench.JsonRecords;
import io.sluice.transport.Transports;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the whole harness in --quick mode on a small table: this JVM drives, a second JVM serves,
 * as in a real run, and every cell checks what it moved. Checks the results file's shape and
 * names, never the figures.
 */
class FlightBenchQuickTest {
  @Test
  @Timeout(120)
  void quickRunMovesTheTableEveryWayAndWritesTheDataPlaneBesideGrpc(@TempDir Path dir) throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable here");
    Path out = dir.resolve("flight.json");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (PrintStream ps = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
      FlightBench.run(FlightBenchOptions.parse("--quick", "--size-mb", "4", "--out", out.toString()), ps);
    }
    Map<String, String> baselines = Map.of(
        "flight.get.tcp", "flight.get.grpc", "flight.get.shm", "flight.get.grpc",
        "flight.put.tcp", "flight.put.grpc", "flight.put.shm", "flight.put.grpc",
        "flight.get.tcp.ceiling", "flight.ceiling.read.tcp", "flight.get.shm.ceiling", "flight.ceiling.read.shm",
        "flight.get.tcp.streams4", "flight.get.grpc.streams4",
        "flight.get.tcp.verified", "flight.get.tcp.noverify", "flight.get.shm.verified", "flight.get.shm.noverify");
    List<String> names = new ArrayList<>();
    for (Object o : JsonRecords.parse(Files.readString(out))) {
      Map<?, ?> r = (Map<?, ?>) o;
      assertEquals(List.of("name", "unit", "value", "baseline_name", "baseline_value"), List.copyOf(r.keySet()));
      String name = (String) r.get("name");
      names.add(name);
      assertEquals(baselines.get(name), r.get("baseline_name"), name);
      assertEquals("GB/s", r.get("unit"));
      assertTrue(JsonRecords.number(r, "value") > 0, name + " has a positive value");
      assertTrue(JsonRecords.number(r, "baseline_value") > 0, name + " has a positive baseline");
    }
    assertEquals(List.of("flight.get.tcp", "flight.get.shm", "flight.put.tcp", "flight.put.shm", "flight.get.tcp.ceiling",
        "flight.get.shm.ceiling", "flight.get.tcp.streams4", "flight.get.tcp.verified", "flight.get.shm.verified"),
        names);
    String table = printed.toString(StandardCharsets.UTF_8);
    for (String name : names) {
      assertTrue(table.lines().anyMatch(l -> l.startsWith(name + " ") && l.contains(baselines.get(name))
          && l.matches(".* \\d+\\.\\d\\dx  [0-9. ]+ \\| [0-9. ]+$")),
          name + " with its ratio and rounds in:\n" + table);
    }
    for (String ceiling : List.of("flight.ceiling.memcpy", "flight.ceiling.socket", "flight.get.tcp.streams2")) {
      assertTrue(table.contains(ceiling), ceiling + " in:\n" + table);
    }
    assertFalse(table.toLowerCase(java.util.Locale.ROOT).contains("goal"), table);
  }
}
