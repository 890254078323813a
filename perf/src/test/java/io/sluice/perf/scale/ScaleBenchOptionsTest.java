package io.sluice.perf.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Cli;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScaleBenchOptionsTest {
  @Test
  void defaults() {
    ScaleBench.Options o = ScaleBench.Options.parse(new String[0]);
    assertEquals(List.of(2, 4, 8, 16, 32), o.executors());
    assertEquals(2, o.rounds());
    assertEquals("384m", o.executorMemory());
    assertEquals(Path.of("perf/results/scale.json"), o.out());
    ScaleBench.Options some = ScaleBench.Options.parse(new String[] {"--executors", "2,6", "--rounds", "3"});
    assertEquals(List.of(2, 6), some.executors());
    assertEquals(3, some.rounds());
    assertEquals(0, some.maxPeerConnections(), "no bounded run unless asked");
    assertEquals(List.of(), some.boundedManagers());
    ScaleBench.Options bounded = ScaleBench.Options.parse(new String[] {"--max-peer-connections", "8"});
    assertEquals(8, bounded.maxPeerConnections());
    assertEquals(List.of(ScaleFigures.BOUNDED), bounded.boundedManagers(), "the manager's default, queue");
    assertEquals(List.of(ScaleFigures.BOUNDED_SPARK, ScaleFigures.BOUNDED), ScaleBench.Options.parse(new String[] {
        "--max-peer-connections", "8", "--peers-beyond-bound", "spark,queue"}).boundedManagers());
    assertEquals(java.util.Map.of(), some.rdmaConf());
    assertEquals(java.util.Map.of("spark.shuffle.rdma.transport.connectTimeoutMs", "60000", "spark.a", "b=c"),
        ScaleBench.Options.parse(new String[] {"--conf", "spark.shuffle.rdma.transport.connectTimeoutMs=60000",
            "--conf", "spark.a=b=c"}).rdmaConf());
    assertEquals("", some.executorJavaOptions(), "no executor options unless asked");
    assertEquals("-agentpath:/p.so=file=/o/{manager}/%p.jfr", ScaleBench.Options.parse(new String[] {
        "--executor-java-options", " -agentpath:/p.so=file=/o/{manager}/%p.jfr "}).executorJavaOptions());
  }

  @Test
  void quickIsSmallAndNeverWritesTheResultsFolder() {
    ScaleBench.Options o = ScaleBench.Options.parse(new String[] {"--quick"});
    assertEquals(List.of(2, 4), o.executors());
    assertEquals(1, o.rounds());
    assertEquals(Path.of("perf/target/scale-quick.json"), o.out());
    assertEquals(Path.of("/t.json"), ScaleBench.Options.parse(new String[] {"--quick", "--out", "/t.json"}).out());
  }

  @Test
  void badInputNamesTheOption() {
    assertTrue(message("--executors", "1,4").contains("at least 2"));
    assertTrue(message("--executors", "4,4").contains("each N once"));
    assertTrue(message("--executors", "two").contains("--executors"));
    assertTrue(message("--rounds", "0").contains("--rounds"));
    assertTrue(message("--executor-memory", "lots").contains("--executor-memory"));
    assertTrue(message("--sample-ms", "-5").contains("--sample-ms"));
    assertTrue(message("--max-peer-connections", "-1").contains("--max-peer-connections"));
    assertTrue(message("--conf", "connectTimeoutMs=1").contains("spark.KEY=VALUE"));
    assertTrue(message("--conf", "spark.shuffle.manager=sort").contains("the benchmark's to set"));
    assertTrue(message("--conf", "spark.shuffle.rdma.peersBeyondBound=spark").contains("--peers-beyond-bound"));
    assertTrue(message("--peers-beyond-bound", "spark").contains("needs --max-peer-connections"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ScaleBench.Options.parse(new String[] {
        "--max-peer-connections", "8", "--peers-beyond-bound", "spark,wait"})).getMessage()
        .contains("--peers-beyond-bound"));
  }

  @Test
  void helpListsEveryOption() {
    String usage = assertThrows(Cli.HelpRequested.class, () -> ScaleBench.Options.parse(new String[] {"--help"}))
        .usage();
    for (String option : List.of("--quick", "--executors", "--rounds", "--partitions-per-executor", "--rows-per-block",
        "--value-bytes", "--executor-memory", "--start-timeout-s", "--job-timeout-s", "--sample-ms", "--max-peer-connections", "--peers-beyond-bound", "--conf",
        "--out")) {
      assertTrue(usage.contains(option), option + " in " + usage);
    }
  }

  private static String message(String option, String value) {
    return assertThrows(IllegalArgumentException.class,
        () -> ScaleBench.Options.parse(new String[] {option, value})).getMessage();
  }
}
