package io.sluice.perf.terasort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class TeraSortOptionsTest {
  @Test
  void defaultsAndPartitionsPerExecutor() {
    TeraSort.Options o = TeraSort.Options.parse(new String[0]);
    assertEquals(256, o.sizeMb());
    assertEquals(4, o.maps(), "256 MB: one partition per 64 MB");
    assertEquals(Path.of("perf/results/terasort.json"), o.out());
    assertEquals(List.of("sort", "rdma"), o.managers());
    TeraSort.Options many = TeraSort.Options.parse(new String[] {"--executors", "4", "--size-mb", "10", "--check"});
    assertEquals(8, many.reducers(), "at least two partitions per executor");
    assertTrue(many.check());
  }

  @Test
  void quickIsSmallAndNeverWritesTheResultsFolder() {
    TeraSort.Options o = TeraSort.Options.parse(new String[] {"--quick"});
    assertEquals(20, o.sizeMb());
    assertEquals(Path.of("perf/target/terasort-quick.json"), o.out());
    assertEquals(Path.of("/t.json"), TeraSort.Options.parse(new String[] {"--quick", "--out", "/t.json"}).out());
  }

  @Test
  void badInputAndHelp() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> TeraSort.Options.parse(new String[] {"--managers", "sort,hash"})).getMessage().contains("hash"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> TeraSort.Options.parse(new String[] {"--rounds", "0"})).getMessage().contains("--rounds"));
    String usage = assertThrows(Cli.HelpRequested.class, () -> TeraSort.Options.parse(new String[] {"--help"}))
        .usage();
    for (String option : List.of("--quick", "--size-mb", "--maps", "--reducers", "--rounds", "--executors", "--dir",
        "--out", "--managers", "--check")) {
      assertTrue(usage.contains(option), option + " in " + usage);
    }
  }
}
