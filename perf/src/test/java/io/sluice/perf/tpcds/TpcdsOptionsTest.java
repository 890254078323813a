package io.sluice.perf.tpcds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TpcdsOptionsTest {
  @Test
  void defaults() {
    TpcdsOptions o = TpcdsOptions.parse(new String[0], Map.of(), "s.jar");
    assertEquals(0.1, o.scale());
    assertEquals("all", o.queries());
    assertEquals("local-cluster[2,1,1024]", o.master());
    assertEquals(0, o.budgetMinutes());
    assertEquals(16, o.shufflePartitions());
    assertEquals(Path.of("perf/results/tpcds.json"), o.out());
    assertFalse(o.standalone());
  }

  @Test
  void masterFromTheEnvironmentUnlessGiven() {
    Map<String, String> env = Map.of("SLUICE_SPARK_MASTER", "spark://10.0.0.1:7077");
    assertTrue(TpcdsOptions.parse(new String[0], env, "s.jar").standalone());
    assertEquals("local-cluster[2,1,1024]",
        TpcdsOptions.parse(new String[] {"--master", "local-cluster[2,1,1024]"}, env, "s.jar").master());
  }

  @Test
  void parsesEveryOption() {
    TpcdsOptions o = TpcdsOptions.parse(new String[] {"--sf", "1", "--queries", "q1,q2", "--time-budget-min", "9",
        "--query-timeout-s", "60", "--executors", "4", "--executor-memory", "1g", "--shuffle-partitions", "8",
        "--data-dir", "/d", "--work-dir", "/w", "--out", "/o.json", "--markdown", "/o.md", "--jar", "x.jar",
        "--conf", "spark.eventLog.enabled=true", "--conf", "a=b=c", "--batch", "10"},
        Map.of(), null);
    assertEquals(new TpcdsOptions(1, "q1,q2", "local-cluster[2,1,1024]", 9, 60, 4, "1g", 8, Path.of("/d"),
        Path.of("/w"), Path.of("/o.json"), Path.of("/o.md"), "x.jar", List.of("spark.eventLog.enabled=true", "a=b=c"),
        10), o);
  }

  @Test
  void rejectsBadInput() {
    assertThrows(IllegalArgumentException.class, () -> TpcdsOptions.parse(new String[] {"--sf"}, Map.of(), "j"));
    assertThrows(IllegalArgumentException.class, () -> TpcdsOptions.parse(new String[] {"--sf", "0"}, Map.of(), "j"));
    assertThrows(IllegalArgumentException.class, () -> TpcdsOptions.parse(new String[] {"--batch", "0"}, Map.of(), "j"));
    assertThrows(IllegalArgumentException.class, () -> TpcdsOptions.parse(new String[] {"--x", "1"}, Map.of(), "j"));
    assertThrows(IllegalArgumentException.class, () -> TpcdsOptions.parse(new String[0], Map.of(), ""));
    assertThrows(IllegalArgumentException.class,
        () -> TpcdsOptions.parse(new String[] {"--conf", "novalue"}, Map.of(), "j"));
  }

  @Test
  void quickIsATinyRunThatNeverWritesTheResultsFolder() {
    TpcdsOptions o = TpcdsOptions.parse(new String[] {"--quick"}, Map.of(), "s.jar");
    assertEquals(0.01, o.scale());
    assertEquals(TpcdsOptions.QUICK_QUERIES, o.queries());
    assertEquals(Path.of("perf/target/tpcds-quick.json"), o.out());
    assertEquals(Path.of("perf/target/tpcds-quick.md"), o.markdown());
    assertEquals(Path.of("/o.json"), TpcdsOptions.parse(new String[] {"--quick", "--out", "/o.json"}, Map.of(), "s.jar")
        .out());
  }

  @Test
  void helpListsEveryOption() {
    Cli.HelpRequested help = assertThrows(Cli.HelpRequested.class,
        () -> TpcdsOptions.parse(new String[] {"--help"}, Map.of(), "j"));
    for (String option : List.of("--quick", "--sf", "--queries", "--master", "--time-budget-min", "--query-timeout-s",
        "--executors", "--executor-memory", "--shuffle-partitions", "--data-dir", "--work-dir", "--out", "--markdown",
        "--jar", "--conf")) {
      assertTrue(help.usage().contains(option), option + " in " + help.usage());
    }
  }

  @Test
  void cacheFolderNamesTheScale() {
    assertEquals(Path.of("/c/sf0.1"), TpcdsCache.folder(Path.of("/c"), 0.1));
    assertEquals(Path.of("/c/sf1"), TpcdsCache.folder(Path.of("/c"), 1.0));
    assertEquals(Path.of("/c/sf1.partial"), TpcdsCache.partial(TpcdsCache.folder(Path.of("/c"), 1.0)));
  }
}
