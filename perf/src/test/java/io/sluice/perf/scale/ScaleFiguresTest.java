package io.sluice.perf.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.perf.bench.Measurement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ScaleFiguresTest {
  private static ProcSampler.Peaks peaks(long pid, int threads, Set<ProcSampler.Link> links) {
    return new ProcSampler.Peaks(pid, 3, 200, 10, links.size(), threads, 230_000, 0, 0, 64L << 20, links);
  }

  private static ScaleFigures.Executor executor(String id, int peers, int threads, Map<String, Long> sluice) {
    return new ScaleFigures.Executor(id, peaks(1, threads, Set.of()), peers, sluice.isEmpty() ? 0 : peers, sluice,
        sluice.isEmpty() ? 0 : 600, 400, 180, 260, 10, sluice.isEmpty() ? 0 : 12, sluice.isEmpty() ? 2 : 0, 60,
        new ProcTables.Limits(20000, -1));
  }

  @Test
  void connectionsBetweenSampledProcessesAreTheirPeers() {
    ProcSampler.Link aToB = new ProcSampler.Link("10.77.0.11:50000", "10.77.0.12:40000");
    ProcSampler.Link bFromA = new ProcSampler.Link("10.77.0.12:40000", "10.77.0.11:50000");
    ProcSampler.Link aToDriver = new ProcSampler.Link("10.77.0.11:50001", "10.77.0.1:7078");
    ProcSampler.Link bToC = new ProcSampler.Link("10.77.0.12:50002", "10.77.0.13:40000");
    Map<Long, ProcSampler.Peaks> all = Map.of(1L, peaks(1, 40, Set.of(aToB, aToDriver)), 2L, peaks(2, 40,
        Set.of(bFromA, bToC)));
    assertEquals(1, ScaleFigures.peerConnections(1, all));
    assertEquals(1, ScaleFigures.peerConnections(2, all), "10.77.0.13 is not a sampled executor");
    assertEquals(1, ScaleFigures.transportConnections(all.get(2L), "10.77.0.12:40000", Set.of("10.77.0.12:40000")));
    assertEquals(1, ScaleFigures.transportConnections(all.get(1L), "10.77.0.11:40000", Set.of("10.77.0.12:40000")));
  }

  @Test
  void peerConnectionsAreTheMostAtOnceNotEveryOneSeen() {
    ProcSampler.Link aToB = new ProcSampler.Link("10.77.0.11:50000", "10.77.0.12:40000");
    ProcSampler.Link aToC = new ProcSampler.Link("10.77.0.11:50001", "10.77.0.13:40000");
    ProcSampler.Link bFromA = new ProcSampler.Link("10.77.0.12:40000", "10.77.0.11:50000");
    ProcSampler.Link cFromA = new ProcSampler.Link("10.77.0.13:40000", "10.77.0.11:50001");
    // A held one connection to B, closed it, then opened one to C: at most one at once.
    ProcSampler.Peaks a = new ProcSampler.Peaks(1, 2, 200, 10, 1, 40, 1, 0, 0, 0, Set.of(aToB, aToC),
        List.of(Set.of(aToB), Set.of(aToC)));
    Map<Long, ProcSampler.Peaks> all = Map.of(1L, a, 2L, peaks(2, 40, Set.of(bFromA)), 3L, peaks(3, 40,
        Set.of(cFromA)));
    assertEquals(1, ScaleFigures.peerConnections(1, all));
  }

  @Test
  void transportCountsFromTheMetrics() {
    ScaleFigures.Executor e = executor("1", 6, 50, Map.of("connections.opened", 3L, "connections.accepted", 3L,
        "connections.closed.peerClosed", 1L, "handshake.failed.timeout", 2L));
    assertEquals(5, e.openConnections());
    assertEquals(8, e.handshakes());
  }

  @Test
  void medianAndMaxPerNBesideTheSortShuffle() {
    Map<String, Long> metrics = Map.of("connections.opened", 3L, "connections.accepted", 3L,
        "memory.registeredBytes", 2048L);
    ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks(9, 70, Set.of()), 4);
    List<ScaleFigures.App> apps = List.of(
        new ScaleFigures.App(4, ScaleFigures.RDMA, 0, 5.0, 1.0, List.of(executor("0", 7, 48, metrics),
            executor("1", 7, 50, metrics), executor("2", 6, 52, metrics), executor("3", 7, 49, metrics)), driver),
        new ScaleFigures.App(4, ScaleFigures.SORT, 0, 10.0, 2.0, List.of(executor("0", 6, 46, Map.of()),
            executor("1", 6, 47, Map.of()), executor("2", 6, 46, Map.of()), executor("3", 6, 46, Map.of())), driver),
        new ScaleFigures.App(2, ScaleFigures.RDMA, 0, 4.0, 1.0, List.of(executor("0", 3, 48, metrics)), driver));
    List<Measurement> m = ScaleFigures.measurements(apps);
    Map<String, Measurement> byName = m.stream().collect(Collectors.toMap(Measurement::name, x -> x));
    assertFalse(byName.keySet().stream().anyMatch(n -> n.startsWith("scale.n2.")), "N=2 has no sort shuffle run");
    assertEquals(7, byName.get("scale.n4.peer_connections.median").value());
    assertEquals(6, byName.get("scale.n4.peer_connections.median").baselineValue());
    assertEquals(52, byName.get("scale.n4.threads.max").value());
    assertEquals(47, byName.get("scale.n4.threads.max").baselineValue());
    assertEquals(0.5, byName.get("scale.n4.job.cold_ratio").value());
    assertEquals(6, byName.get("scale.n4.transport.connections.median").value());
    assertEquals(2, byName.get("scale.n4.transport.registered.max").value());
    assertEquals(4, byName.get("scale.n4.driver.registered_executors").value());
    assertEquals(20000, byName.get("scale.n4.fd_limit").value());
    assertEquals(-1, byName.get("scale.n4.memlock_limit").value(), "unlimited");
    assertEquals("sort_shuffle.scale.n4.threads.median", byName.get("scale.n4.threads.median").baselineName());
    assertTrue(m.get(0).name().startsWith("scale.n4."));
  }

  @Test
  void theColdJobsCpuByKindBesideTheSortShufflesOnlyWhereEveryApplicationReadIt() {
    ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks(9, 70, Set.of()), 2);
    List<ScaleFigures.Executor> two = List.of(executor("0", 1, 40, Map.of()), executor("1", 1, 40, Map.of()));
    List<ScaleFigures.App> apps = List.of(
        new ScaleFigures.App(2, ScaleFigures.RDMA, 0, 5.0, 1.0, two, driver, Map.of("task", 3.0, "total", 4.0)),
        new ScaleFigures.App(2, ScaleFigures.RDMA, 1, 5.0, 1.0, two, driver, Map.of("task", 5.0, "total", 8.0)),
        new ScaleFigures.App(2, ScaleFigures.SORT, 0, 4.0, 1.0, two, driver, Map.of("task", 2.0, "total", 3.0)),
        new ScaleFigures.App(4, ScaleFigures.RDMA, 0, 5.0, 1.0, two, driver, Map.of("task", 3.0, "total", 4.0)),
        new ScaleFigures.App(4, ScaleFigures.RDMA, 1, 5.0, 1.0, two, driver),
        new ScaleFigures.App(4, ScaleFigures.SORT, 0, 4.0, 1.0, two, driver));
    Map<String, Measurement> byName = ScaleFigures.measurements(apps).stream()
        .collect(Collectors.toMap(Measurement::name, x -> x));
    assertEquals(6.0, byName.get("scale.n2.job.cold_cpu.total").value(), "the median over rounds");
    assertEquals(3.0, byName.get("scale.n2.job.cold_cpu.total").baselineValue());
    assertEquals(4.0, byName.get("scale.n2.job.cold_cpu.task").value());
    assertFalse(byName.keySet().stream().anyMatch(n -> n.startsWith("scale.n4.job.cold_cpu")), "a round without it");
  }

  @Test
  void theBoundedManagerBesideTheUnboundedOneAndTheSortShuffle() {
    Map<String, Long> open = Map.of("connections.opened", 7L, "connections.accepted", 7L);
    Map<String, Long> bound = Map.of("connections.opened", 9L, "connections.accepted", 9L,
        "connections.closed.evicted", 14L, ScaleFigures.PEAK, 2L, ScaleFigures.WAITS, 3L, ScaleFigures.EVICTIONS, 7L);
    ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks(9, 70, Set.of()), 8);
    List<ScaleFigures.Executor> unbounded = List.of(executor("0", 14, 60, open), executor("1", 14, 61, open));
    List<ScaleFigures.Executor> withBound = List.of(executor("0", 4, 55, bound), executor("1", 4, 56, bound));
    List<ScaleFigures.Executor> sort = List.of(executor("0", 7, 50, Map.of()), executor("1", 7, 50, Map.of()));
    List<Measurement> m = ScaleFigures.measurements(List.of(
        new ScaleFigures.App(8, ScaleFigures.BOUNDED, 0, 6.0, 1.5, withBound, driver),
        new ScaleFigures.App(8, ScaleFigures.RDMA, 0, 4.0, 1.0, unbounded, driver),
        new ScaleFigures.App(8, ScaleFigures.SORT, 0, 5.0, 2.0, sort, driver)));
    Map<String, Measurement> byName = m.stream().collect(Collectors.toMap(Measurement::name, x -> x));
    Measurement peers = byName.get("scale.n8.bounded.peer_connections.median");
    assertEquals(4, peers.value());
    assertEquals(14, peers.baselineValue(), "the unbounded manager's");
    assertEquals("scale.n8.peer_connections.median", peers.baselineName());
    assertEquals(18, byName.get("scale.n8.bounded.transport.handshakes.median").value());
    assertEquals(2, byName.get("scale.n8.bounded.transport.opened_at_once.max").value());
    assertEquals(7, byName.get("scale.n8.bounded.transport.evictions.median").value());
    Measurement ratio = byName.get("scale.n8.bounded.job.cold_ratio");
    assertEquals(1.2, ratio.value(), 1e-9);
    assertEquals(0.8, ratio.baselineValue(), 1e-9);
    assertEquals(14, byName.get("scale.n8.peer_connections.median").value(), "the unbounded figures stay");
  }

  @Test
  void theBoundedManagerThatPassesPeersOnHasFiguresOfItsOwn() {
    Map<String, Long> open = Map.of("connections.opened", 7L, "connections.accepted", 7L);
    Map<String, Long> passing = Map.of("connections.opened", 2L, "connections.accepted", 2L, ScaleFigures.PEAK, 2L,
        ScaleFigures.PASSED_ON, 10L);
    ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks(9, 70, Set.of()), 8);
    List<Measurement> m = ScaleFigures.measurements(List.of(
        new ScaleFigures.App(8, ScaleFigures.BOUNDED_SPARK, 0, 4.4, 1.1,
            List.of(executor("0", 4, 55, passing), executor("1", 4, 56, passing)), driver),
        new ScaleFigures.App(8, ScaleFigures.RDMA, 0, 4.0, 1.0,
            List.of(executor("0", 14, 60, open), executor("1", 14, 61, open)), driver),
        new ScaleFigures.App(8, ScaleFigures.SORT, 0, 4.0, 1.0,
            List.of(executor("0", 7, 50, Map.of()), executor("1", 7, 50, Map.of())), driver)));
    Map<String, Measurement> byName = m.stream().collect(Collectors.toMap(Measurement::name, x -> x));
    assertEquals(10, byName.get("scale.n8.bounded_spark.transport.passed_on.median").value());
    assertEquals(0, byName.get("scale.n8.bounded_spark.transport.passed_on.median").baselineValue());
    assertEquals(1.1, byName.get("scale.n8.bounded_spark.job.cold_ratio").value(), 1e-9);
    assertFalse(byName.keySet().stream().anyMatch(n -> n.startsWith("scale.n8.bounded.")), "no queueing run");
  }

  @Test
  void withoutTheSortShuffleTheBoundedRunIsLeftOutToo() {
    ScaleFigures.Driver driver = new ScaleFigures.Driver(peaks(9, 70, Set.of()), 2);
    List<Measurement> m = ScaleFigures.measurements(List.of(
        new ScaleFigures.App(2, ScaleFigures.BOUNDED, 0, 6.0, 1.5, List.of(executor("0", 1, 55, Map.of())), driver),
        new ScaleFigures.App(2, ScaleFigures.RDMA, 0, 4.0, 1.0, List.of(executor("0", 1, 55, Map.of())), driver)));
    assertTrue(m.isEmpty());
  }
}
