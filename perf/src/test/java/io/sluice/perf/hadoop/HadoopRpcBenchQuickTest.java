package io.sluice.perf.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.JsonRecords;
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
 * Runs the Hadoop RPC harness in --quick mode on a few cells (both engines, one real server on
 * loopback) and checks the results file's shape and names, never the figures.
 */
class HadoopRpcBenchQuickTest {
  @Test
  @Timeout(180)
  void quickRunWritesEveryMeasurementBesideTheStockEngine(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("hadoop-rpc.json");
    HadoopRpcBench.run(HadoopRpcBench.BenchArgs.parse(
        new String[] {"--quick", "--threads", "1,8", "--sizes", "4096,1048576", "--out", out.toString()}));
    Map<String, String> expected = new LinkedHashMap<>();
    for (String size : List.of("4KiB", "1MiB")) {
      for (int threads : new int[] {1, 8}) {
        String sluice = "hadoop.sluice.echo." + size + ".threads" + threads;
        String stock = "hadoop.stock.echo." + size + ".threads" + threads;
        expected.put(sluice + ".calls", stock + ".calls");
        expected.put(sluice + ".p50", stock + ".p50");
        expected.put(sluice + ".p99", stock + ".p99");
        if (size.equals("1MiB")) {
          expected.put(sluice + ".throughput", stock + ".throughput");
        }
      }
    }
    List<?> records = JsonRecords.parse(Files.readString(out));
    List<String> names = new ArrayList<>();
    for (Object o : records) {
      Map<?, ?> r = (Map<?, ?>) o;
      String name = (String) r.get("name");
      names.add(name);
      assertEquals(expected.get(name), r.get("baseline_name"), "baseline of " + name);
      String unit = name.endsWith(".calls") ? "calls/s" : name.endsWith(".throughput") ? "MiB/s" : "us";
      assertEquals(unit, r.get("unit"), "unit of " + name);
      assertTrue(JsonRecords.number(r, "value") > 0, name + " has a positive value");
      assertTrue(JsonRecords.number(r, "baseline_value") > 0, name + " has a positive baseline");
    }
    assertEquals(List.copyOf(expected.keySet()), names);
  }
}
