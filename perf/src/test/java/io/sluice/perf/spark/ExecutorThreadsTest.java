package io.sluice.perf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.perf.spark.ExecutorThreads.Kind;
import io.sluice.perf.spark.ExecutorThreads.Process;
import io.sluice.perf.spark.ExecutorThreads.Snapshot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ExecutorThreadsTest {
  @Test
  void namesAsTheKernelKeepsThem() {
    assertEquals(Kind.TASK, ExecutorThreads.classify("Executor task l"));
    assertEquals(Kind.SLUICE, ExecutorThreads.classify("sluice-io-exec-"));
    assertEquals(Kind.NETTY_SHUFFLE, ExecutorThreads.classify("shuffle-client-"));
    assertEquals(Kind.NETTY_SHUFFLE, ExecutorThreads.classify("shuffle-server-"));
    assertEquals(Kind.RPC, ExecutorThreads.classify("rpc-client-1-1"));
    assertEquals(Kind.RPC, ExecutorThreads.classify("netty-rpc-conne"));
    assertEquals(Kind.JIT, ExecutorThreads.classify("C2 CompilerThre"));
    assertEquals(Kind.GC, ExecutorThreads.classify("GC Thread#0"));
    assertEquals(Kind.GC, ExecutorThreads.classify("G1 Refine#0"));
    assertEquals(Kind.OTHER, ExecutorThreads.classify("java"));
  }

  @Test
  void statLineWithSpacesAndParenthesesInTheName() {
    String stat = "4242 (C2 (Compiler) x) S 10093 10083 10083 0 -1 4194368 1000 0 0 0 119 17 0 0 20 0 40 0";
    assertEquals("C2 (Compiler) x", ExecutorThreads.name(stat));
    assertEquals(136, ExecutorThreads.ticks(stat));
  }

  @Test
  void timeOfEndedThreadsIsExitedAndNewThreadsCountFromZero() {
    Snapshot before = new Snapshot(List.of(new Process(7, 1000,
        Map.of(1L, "Executor task l", 2L, "C2 CompilerThre", 3L, "shuffle-client-"),
        Map.of(1L, 100L, 2L, 500L, 3L, 50L))));
    Snapshot after = new Snapshot(List.of(new Process(7, 1400,
        Map.of(1L, "Executor task l", 2L, "C2 CompilerThre", 4L, "Executor task l"),
        Map.of(1L, 250L, 2L, 600L, 4L, 30L))));
    Map<Kind, Double> s = ExecutorThreads.between(before, after);
    assertEquals(1.8, s.get(Kind.TASK), 1e-9);
    assertEquals(1.0, s.get(Kind.JIT), 1e-9);
    assertEquals(0.0, s.get(Kind.NETTY_SHUFFLE), 1e-9);
    assertEquals(1.2, s.get(Kind.EXITED), 1e-9);
  }
}
