package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.perf.bench.JsonRecords;
import io.sluice.transport.Transports;
import io.sluice.transport.crypto.AesGcmEngine;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the whole harness in --quick mode: this JVM drives, a second JVM serves, as in a real run.
 * Checks the results file's shape and names, never the figures.
 */
class TransportBenchQuickTest {
  @Test
  @Timeout(180)
  void quickRunOverTcpWritesEveryMeasurementWithItsBaseline(@TempDir Path dir) throws Exception {
    Map<String, String> expected = new LinkedHashMap<>();
    for (String size : List.of("64KiB", "1MiB", "8MiB")) {
      // The cryptography alone (each engine available here sealing, the ceiling of encrypted
      // READs, and tagging mac mode's READ bodies by GMAC; HMAC-SHA256 beside it), then plain tcp
      // against the socket and encrypted tcp against plain tcp of the same block and depth.
      for (AesGcmEngine e : AesGcmEngine.values()) {
        if (e.unavailabilityCause().isEmpty()) {
          expected.put("aes-gcm-" + e.id() + ".seal." + size, "memcpy." + size);
          expected.put("aes-gcm-" + e.id() + ".gmac." + size, "memcpy." + size);
        }
      }
      expected.put("hmac-sha256.jdk." + size, "memcpy." + size);
      for (String depth : List.of("inflight1", "inflight8")) {
        expected.put("tcp.read." + size + "." + depth, "socket.stream." + size);
      }
      for (String variant : List.of("tcp-aes", "tcp-aes-jdk")) {
        for (String depth : List.of("inflight1", "inflight8")) {
          expected.put(variant + ".read." + size + "." + depth, "tcp.read." + size + "." + depth);
        }
      }
    }
    for (String variant : List.of("tcp", "tcp-aes", "tcp-aes-jdk")) {
      expected.put(variant + ".read.4KiB.latency.p50", "socket.pingpong.4KiB.p50");
      expected.put(variant + ".read.4KiB.latency.p99", "socket.pingpong.4KiB.p99");
    }
    for (String variant : List.of("tcp", "tcp-aes", "tcp-aes-jdk")) {
      expected.put(variant + ".connect.latency.p50", "socket.connect.latency.p50");
      expected.put(variant + ".connect.latency.p99", "socket.connect.latency.p99");
    }

    String table = runQuick(dir, "tcp,tcp-aes,tcp-aes-jdk", expected);
    assertTrue(table.lines().anyMatch(l -> l.startsWith("tcp.read.1MiB.inflight8 ") && l.contains("socket.stream.1MiB")
        && l.matches(".* \\d+\\.\\d\\dx$")), "the table prints each ratio beside its baseline:\n" + table);
    assertFalse(table.toLowerCase(java.util.Locale.ROOT).contains("goal"), table);
  }

  @Test
  @Timeout(180)
  void quickRunOverShmPairsThroughputWithMemcpyAndAllocationWithASparseFile(@TempDir Path dir) throws Exception {
    assumeTrue(Transports.provider("shm").isAvailable(), "shm provider unavailable here");
    Map<String, String> expected = new LinkedHashMap<>();
    for (String size : List.of("64KiB", "1MiB", "8MiB")) {
      expected.put("shm.read." + size + ".inflight1", "memcpy." + size);
      expected.put("shm.read." + size + ".inflight8", "memcpy." + size);
    }
    expected.put("shm.read.4KiB.latency.p50", "socket.pingpong.4KiB.p50");
    expected.put("shm.read.4KiB.latency.p99", "socket.pingpong.4KiB.p99");
    expected.put("shm.connect.latency.p50", "socket.connect.latency.p50");
    expected.put("shm.connect.latency.p99", "socket.connect.latency.p99");
    for (String size : List.of("64KiB", "1MiB", "8MiB")) {
      expected.put("shm.allocate." + size, "sparse-file.allocate." + size);
    }
    runQuick(dir, "shm", expected);
  }

  /** Runs the harness, checks the file against {@code expected} (name to baseline name), returns the printout. */
  private static String runQuick(Path dir, String provider, Map<String, String> expected) throws Exception {
    Path out = dir.resolve("results").resolve("transport.json");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (PrintStream ps = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
      TransportBench.run(BenchOptions.parse("--quick", "--providers", provider, "--out", out.toString()), ps);
    }
    List<?> records = JsonRecords.parse(Files.readString(out));
    List<String> names = new ArrayList<>();
    for (Object o : records) {
      Map<?, ?> r = (Map<?, ?>) o;
      assertEquals(List.of("name", "unit", "value", "baseline_name", "baseline_value"), List.copyOf(r.keySet()));
      String name = (String) r.get("name");
      names.add(name);
      assertEquals(expected.get(name), r.get("baseline_name"), "baseline of " + name);
      assertEquals(name.contains(".latency.") ? "us" : "GB/s", r.get("unit"), "unit of " + name);
      assertTrue(JsonRecords.number(r, "value") > 0, name + " has a positive value");
      assertTrue(JsonRecords.number(r, "baseline_value") > 0, name + " has a positive baseline");
    }
    assertEquals(List.copyOf(expected.keySet()), names);
    String table = printed.toString(StandardCharsets.UTF_8);
    for (String name : names) {
      assertTrue(table.contains(name), "table lists " + name);
    }
    return table;
  }
}
