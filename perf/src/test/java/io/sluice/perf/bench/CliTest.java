package io.sluice.perf.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Option;

class CliTest {
  private static final Cli.Command COMMAND = new Cli.Command("demo-bench", "demo", "Measures nothing.",
      "Smoke run.");

  static final class Flags {
    @Option(names = "--rounds", paramLabel = "N", description = "Rounds (default 2).")
    int rounds = 2;
  }

  @Test
  void theResultsFileFollowsOneRuleUnlessOutNamesAnother() {
    Cli.Parsed<Flags> full = Cli.parse(COMMAND, new Flags());
    assertFalse(full.quick());
    assertEquals(Path.of("perf/results/demo.json"), full.out());
    Cli.Parsed<Flags> quick = Cli.parse(COMMAND, new Flags(), "--quick", "--rounds", "5");
    assertTrue(quick.quick());
    assertEquals(5, quick.options().rounds);
    assertEquals(Path.of("perf/target/demo-quick.json"), quick.out());
    assertEquals(Path.of("/tmp/x.json"), Cli.parse(COMMAND, new Flags(), "--quick", "--out", "/tmp/x.json").out());
  }

  @Test
  void helpListsTheOwnOptionsBetweenQuickAndOut() {
    String usage = assertThrows(Cli.HelpRequested.class, () -> Cli.parse(COMMAND, new Flags(), "--help")).usage();
    String list = usage.substring(usage.indexOf("-h, --help"));
    assertTrue(list.indexOf("--quick") < list.indexOf("--rounds=N"), usage);
    assertTrue(list.indexOf("--rounds=N") < list.indexOf("--out=FILE"), usage);
    assertTrue(list.contains("Results file (default perf/results/demo.json"), usage);
    assertTrue(list.contains("perf/target/demo-quick.json"), usage);
  }

  @Test
  void badCommandLinesAndCommandsNameWhatIsWrong() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cli.parse(COMMAND, new Flags(), "--out"))
        .getMessage().contains("--out"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Cli.parse(COMMAND, new Flags(), "--nope"))
        .getMessage().contains("--nope"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new Cli.Command("x", " ", "d", "q"))
        .getMessage().contains("results"));
  }

  @Test
  void sparkSettingsKeepTheValueWholeAndRefuseWhatTheBenchmarkSets() {
    assertEquals(List.of("spark.a", "spark.b"), List.copyOf(Cli.sparkSettings(
        List.of("spark.b=x=y", "spark.a="), Map.of()).keySet()));
    assertEquals("x=y", Cli.sparkSettings(List.of("spark.b=x=y"), Map.of()).get("spark.b"));
    String reserved = assertThrows(IllegalArgumentException.class, () -> Cli.sparkSettings(
        List.of("spark.shuffle.manager=sort"), Map.of("spark.shuffle.manager", "--managers")))
        .getMessage();
    assertTrue(reserved.contains("spark.shuffle.manager") && reserved.contains("--managers"), reserved);
    for (String bad : new String[] {"=x", "a=b", "spark.a"}) {
      assertThrows(IllegalArgumentException.class, () -> Cli.sparkSettings(List.of(bad), Map.of()),
          bad);
    }
  }
}
