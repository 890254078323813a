package io.sluice.perf.scale;

import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * What one application of the scale benchmark measured, and how the applications of every
 * executor count become the results file: per N, each executor figure's median and maximum over
 * every executor of every round, RdmaShuffleManager's beside the sort shuffle's, the job times and
 * their ratio, the driver's figures, and the transport's own counts with the sort shuffle's
 * nearest figure as their baseline. Immutable records and stateless functions.
 */
final class ScaleFigures {
  static final String SORT = "sort";
  static final String RDMA = "rdma";
  /** RdmaShuffleManager with a bound on each executor's connections to peers (spark.shuffle.rdma.maxPeerConnections). */
  static final String BOUNDED = "rdma-bounded";
  /**
   * The same bound, with the peers it has no room for read through Spark's reader
   * (spark.shuffle.rdma.peersBeyondBound=spark).
   */
  static final String BOUNDED_SPARK = "rdma-bounded-spark";
  /** The executor's {@code sluice} gauges of the bound: connections it opened at once at most, waits, evictions. */
  static final String PEAK = "peerConnections.peak";
  static final String WAITS = "peerConnections.waits";
  static final String EVICTIONS = "peerConnections.evictions";
  /** Peers the executor's reduce tasks read through Spark's reader, the bound having no room for them. */
  static final String PASSED_ON = "peerConnections.passedOn";

  private ScaleFigures() {}

  /**
   * One executor of one application.
   *
   * @param peerConnections the most established TCP connections at once to or from other executors of the application
   * @param transportConnections those on the shuffle transport's listening port or to a peer's (RdmaShuffleManager)
   * @param sluice the executor's {@code sluice} metrics; empty for the sort shuffle or where not read
   * @param openMs the transport's open on its own thread (0 where not reported)
   * @param openWaitMs the first task's wait for that open
   * @param firstConnectMedianMs the median first connection to a peer (connect and authenticate)
   * @param firstConnectMaxMs the slowest one
   * @param handshakeCpuMs CPU of the transport's proof and connect threads during the jobs
   * @param transportThreads live threads named {@code sluice-*} after the jobs
   * @param nettyShuffleThreads live Netty block-transfer threads after the jobs
   * @param nettyShuffleCpuMs CPU of those threads during the jobs
   * @param limits the JVM's soft limits of open files and locked memory
   */
  record Executor(String executorId, ProcSampler.Peaks peaks, int peerConnections, int transportConnections,
      Map<String, Long> sluice, double openMs, double openWaitMs, double firstConnectMedianMs,
      double firstConnectMaxMs, double handshakeCpuMs, int transportThreads, int nettyShuffleThreads,
      double nettyShuffleCpuMs, ProcTables.Limits limits) {
    /**
     * Transport connections open after the jobs, by the transport's own counts: opened + accepted - closed, where
     * closed counts accepted connections only (a connection this side opened and closed is not subtracted): right
     * while no connection is closed before the application ends, which a bound on peer connections breaks.
     */
    long openConnections() {
      long closed = 0;
      for (Map.Entry<String, Long> e : sluice.entrySet()) {
        if (e.getKey().startsWith("connections.closed.")) {
          closed += e.getValue();
        }
      }
      return sluice.getOrDefault("connections.opened", 0L) + sluice.getOrDefault("connections.accepted", 0L) - closed;
    }

    /** One of the executor's {@code sluice} gauges, 0 where not reported. */
    double gauge(String name) {
      return sluice.getOrDefault(name, 0L);
    }

    /** Authenticated connections made and taken, and handshakes that failed. */
    long handshakes() {
      long failed = 0;
      for (Map.Entry<String, Long> e : sluice.entrySet()) {
        if (e.getKey().startsWith("handshake.failed.")) {
          failed += e.getValue();
        }
      }
      return sluice.getOrDefault("connections.opened", 0L) + sluice.getOrDefault("connections.accepted", 0L) + failed;
    }
  }

  /** The driver (the benchmark's own JVM) during one application's jobs. */
  record Driver(ProcSampler.Peaks peaks, long registeredExecutors) {}

  /** One application: N executors under one manager in one round. */
  record App(int executors, String manager, int round, double coldSeconds, double warmSeconds,
      List<Executor> executorFigures, Driver driver, Map<String, Double> coldCpuSeconds) {
    /** An application whose executors' CPU during the cold job was not read. */
    App(int executors, String manager, int round, double coldSeconds, double warmSeconds,
        List<Executor> executorFigures, Driver driver) {
      this(executors, manager, round, coldSeconds, warmSeconds, executorFigures, driver, Map.of());
    }
  }

  /**
   * The most established connections {@code pid} had at once (in one sample) to or from another of the sampled
   * executors: a connection between two of them shows in both, with the endpoints swapped.
   */
  static int peerConnections(long pid, Map<Long, ProcSampler.Peaks> executors) {
    Set<String> othersLocal = new TreeSet<>();
    executors.forEach((p, peaks) -> {
      if (p != pid) {
        peaks.links().forEach(l -> othersLocal.add(l.local()));
      }
    });
    int most = 0;
    for (Set<ProcSampler.Link> sample : executors.get(pid).linkSamples()) {
      int n = 0;
      for (ProcSampler.Link l : sample) {
        if (othersLocal.contains(l.remote())) {
          n++;
        }
      }
      most = Math.max(most, n);
    }
    return most;
  }

  /**
   * Established connections of one executor on the shuffle transport: accepted on its own
   * transport address, or made to a peer's.
   */
  static int transportConnections(ProcSampler.Peaks peaks, String ownAddress, Set<String> peerAddresses) {
    int n = 0;
    for (ProcSampler.Link l : peaks.links()) {
      if (l.local().equals(ownAddress) || peerAddresses.contains(l.remote())) {
        n++;
      }
    }
    return n;
  }

  /** The results file's measurements, N by N in increasing order; an N without both managers is left out. */
  static List<Measurement> measurements(List<App> apps) {
    Map<Integer, List<App>> byN = new TreeMap<>();
    for (App a : apps) {
      byN.computeIfAbsent(a.executors(), k -> new ArrayList<>()).add(a);
    }
    List<Measurement> out = new ArrayList<>();
    byN.forEach((n, list) -> {
      List<App> rdma = list.stream().filter(a -> a.manager().equals(RDMA)).toList();
      List<App> sort = list.stream().filter(a -> a.manager().equals(SORT)).toList();
      List<App> bounded = list.stream().filter(a -> a.manager().equals(BOUNDED)).toList();
      List<App> boundedSpark = list.stream().filter(a -> a.manager().equals(BOUNDED_SPARK)).toList();
      if (!rdma.isEmpty() && !sort.isEmpty()) {
        out.addAll(forN(n, rdma, sort));
        if (!bounded.isEmpty()) {
          out.addAll(bounded(n, "bounded", bounded, rdma, sort));
        }
        if (!boundedSpark.isEmpty()) {
          out.addAll(bounded(n, "bounded_spark", boundedSpark, rdma, sort));
        }
      }
    });
    return out;
  }

  private static List<Measurement> forN(int n, List<App> rdma, List<App> sort) {
    String p = "scale.n" + n + ".";
    String b = "sort_shuffle.scale.n" + n + ".";
    List<Executor> re = executors(rdma);
    List<Executor> se = executors(sort);
    List<Measurement> out = new ArrayList<>();
    spread(out, p, b, "peer_connections", "count", re, se, e -> e.peerConnections());
    spread(out, p, b, "tcp_connections", "count", re, se, e -> e.peaks().tcpEstablished());
    spread(out, p, b, "sockets", "count", re, se, e -> e.peaks().sockets());
    spread(out, p, b, "fds", "count", re, se, e -> e.peaks().fds());
    spread(out, p, b, "threads", "count", re, se, e -> e.peaks().threads());
    spread(out, p, b, "rss", "MB", re, se, e -> e.peaks().rssKb() / 1024.0);
    out.add(new Measurement(p + "fd_limit", "count", min(re, e -> e.limits().openFiles()), b + "fd_limit",
        min(se, e -> e.limits().openFiles())));
    out.add(new Measurement(p + "memlock_limit", "kB", min(re, e -> e.limits().lockedBytes() / 1024.0),
        b + "memlock_limit", min(se, e -> e.limits().lockedBytes() / 1024.0)));
    out.add(new Measurement(p + "locked.max", "kB", max(re, e -> e.peaks().lockedKb()), b + "locked.max",
        max(se, e -> e.peaks().lockedKb())));
    out.add(new Measurement(p + "pinned.max", "kB", max(re, e -> e.peaks().pinnedKb()), b + "pinned.max",
        max(se, e -> e.peaks().pinnedKb())));

    double rCold = overRounds(rdma, App::coldSeconds);
    double sCold = overRounds(sort, App::coldSeconds);
    double rWarm = overRounds(rdma, App::warmSeconds);
    double sWarm = overRounds(sort, App::warmSeconds);
    out.add(new Measurement(p + "job.cold", "s", rCold, b + "job.cold", sCold));
    out.add(new Measurement(p + "job.warm", "s", rWarm, b + "job.warm", sWarm));
    out.add(new Measurement(p + "job.cold_ratio", "x", rCold / sCold, b + "job.cold_ratio", 1.0));
    out.add(new Measurement(p + "job.warm_ratio", "x", rWarm / sWarm, b + "job.warm_ratio", 1.0));
    // CPU the executors used during the cold job, all of them together, by what their threads do.
    for (String kind : coldCpuKinds(rdma)) {
      out.add(new Measurement(p + "job.cold_cpu." + kind, "s", overRounds(rdma, a -> a.coldCpuSeconds().get(kind)),
          b + "job.cold_cpu." + kind, overRounds(sort, a -> a.coldCpuSeconds().getOrDefault(kind, 0.0))));
    }

    driver(out, p, b, "threads", "count", rdma, sort, d -> d.peaks().threads());
    driver(out, p, b, "fds", "count", rdma, sort, d -> d.peaks().fds());
    driver(out, p, b, "tcp_connections", "count", rdma, sort, d -> d.peaks().tcpEstablished());
    driver(out, p, b, "heap_used", "MB", rdma, sort, d -> d.peaks().heapUsedBytes() / 1048576.0);
    driver(out, p, b, "rss", "MB", rdma, sort, d -> d.peaks().rssKb() / 1024.0);
    out.add(new Measurement(p + "driver.registered_executors", "count",
        Median.of(rdma.stream().mapToDouble(a -> a.driver().registeredExecutors()).toArray()),
        p + "executors", n));

    List<Executor> reported = re.stream().filter(e -> !e.sluice().isEmpty()).toList();
    if (!reported.isEmpty()) {
      double sortPeers = median(se, e -> e.peerConnections());
      double sortPeersMax = max(se, e -> e.peerConnections());
      out.add(new Measurement(p + "transport.connections.median", "count", median(reported, e -> e.openConnections()),
          b + "peer_connections.median", sortPeers));
      out.add(new Measurement(p + "transport.connections.max", "count", max(reported, e -> e.openConnections()),
          b + "peer_connections.max", sortPeersMax));
      out.add(new Measurement(p + "transport.handshakes.median", "count", median(reported, e -> e.handshakes()),
          b + "peer_connections.median", sortPeers));
      out.add(new Measurement(p + "transport.registered.max", "kB",
          max(reported, e -> e.sluice().getOrDefault("memory.registeredBytes", 0L) / 1024.0),
          b + "locked.max", max(se, e -> e.peaks().lockedKb())));
    }
    spread(out, p, b, "transport.proc_connections", "count", re, se, e -> e.transportConnections(),
        "peer_connections", e -> e.peerConnections());
    spread(out, p, b, "transport.threads", "count", re, se, e -> e.transportThreads(), "netty_shuffle.threads",
        e -> e.nettyShuffleThreads());
    spread(out, p, b, "transport.handshake_cpu", "ms", re, se, e -> e.handshakeCpuMs(), "netty_shuffle.cpu",
        e -> e.nettyShuffleCpuMs());
    List<Executor> opened = re.stream().filter(e -> e.openMs() > 0).toList();
    if (!opened.isEmpty()) {
      double coldMs = rCold * 1000;
      String job = p + "job.cold_ms";
      out.add(new Measurement(p + "transport.open.median", "ms", median(opened, Executor::openMs), job, coldMs));
      out.add(new Measurement(p + "transport.open_wait.median", "ms", median(opened, Executor::openWaitMs), job,
          coldMs));
      out.add(new Measurement(p + "transport.first_connect.median", "ms",
          median(opened, Executor::firstConnectMedianMs), job, coldMs));
      out.add(new Measurement(p + "transport.first_connect.max", "ms", max(opened, Executor::firstConnectMaxMs), job,
          coldMs));
    }
    return out;
  }

  /**
   * RdmaShuffleManager with a bound ({@code scale.n<N>.<kind>.*}: {@code bounded}, or {@code bounded_spark}
   * where the peers the bound has no room for go through Spark's reader) beside the same manager without one: the curve
   * after the change beside the curve before it, from the same run.
   */
  private static List<Measurement> bounded(int n, String kind, List<App> bounded, List<App> rdma, List<App> sort) {
    String p = "scale.n" + n + "." + kind + ".";
    String b = "scale.n" + n + ".";
    List<Executor> be = executors(bounded);
    List<Executor> re = executors(rdma);
    List<Measurement> out = new ArrayList<>();
    spread(out, p, b, "peer_connections", "count", be, re, e -> e.peerConnections());
    spread(out, p, b, "tcp_connections", "count", be, re, e -> e.peaks().tcpEstablished());
    spread(out, p, b, "fds", "count", be, re, e -> e.peaks().fds());
    spread(out, p, b, "threads", "count", be, re, e -> e.peaks().threads());
    spread(out, p, b, "transport.threads", "count", be, re, e -> e.transportThreads());
    spread(out, p, b, "transport.handshake_cpu", "ms", be, re, e -> e.handshakeCpuMs());
    spread(out, p, b, "transport.opened_at_once", "count", be, re, e -> e.gauge(PEAK));
    spread(out, p, b, "transport.waits", "count", be, re, e -> e.gauge(WAITS));
    spread(out, p, b, "transport.evictions", "count", be, re, e -> e.gauge(EVICTIONS));
    spread(out, p, b, "transport.passed_on", "count", be, re, e -> e.gauge(PASSED_ON));
    List<Executor> reported = be.stream().filter(e -> !e.sluice().isEmpty()).toList();
    List<Executor> reportedBefore = re.stream().filter(e -> !e.sluice().isEmpty()).toList();
    if (!reported.isEmpty() && !reportedBefore.isEmpty()) {
      out.add(new Measurement(p + "transport.handshakes.median", "count", median(reported, e -> e.handshakes()),
          b + "transport.handshakes.median", median(reportedBefore, e -> e.handshakes())));
    }
    double bCold = overRounds(bounded, App::coldSeconds);
    double bWarm = overRounds(bounded, App::warmSeconds);
    double rCold = overRounds(rdma, App::coldSeconds);
    double rWarm = overRounds(rdma, App::warmSeconds);
    double sCold = overRounds(sort, App::coldSeconds);
    double sWarm = overRounds(sort, App::warmSeconds);
    out.add(new Measurement(p + "job.cold", "s", bCold, b + "job.cold", rCold));
    out.add(new Measurement(p + "job.warm", "s", bWarm, b + "job.warm", rWarm));
    // Against the sort shuffle, beside the unbounded manager's ratio.
    out.add(new Measurement(p + "job.cold_ratio", "x", bCold / sCold, b + "job.cold_ratio", rCold / sCold));
    out.add(new Measurement(p + "job.warm_ratio", "x", bWarm / sWarm, b + "job.warm_ratio", rWarm / sWarm));
    return out;
  }

  /** The median over rounds of one application figure. */
  private static double overRounds(List<App> apps, ToDoubleFunction<App> f) {
    return Median.of(apps.stream().mapToDouble(f).toArray());
  }

  /** The kinds of CPU every one of these applications read for its cold job; none if one did not. */
  private static List<String> coldCpuKinds(List<App> apps) {
    if (apps.isEmpty() || apps.stream().anyMatch(a -> a.coldCpuSeconds().isEmpty())) {
      return List.of();
    }
    return List.copyOf(apps.get(0).coldCpuSeconds().keySet());
  }

  private static List<Executor> executors(List<App> apps) {
    return apps.stream().flatMap(a -> a.executorFigures().stream()).toList();
  }

  private static void spread(List<Measurement> out, String p, String b, String name, String unit, List<Executor> r,
      List<Executor> s, ToDoubleFunction<Executor> f) {
    spread(out, p, b, name, unit, r, s, f, name, f);
  }

  /** {@code <name>.median} and {@code .max} of RdmaShuffleManager's executors beside the sort shuffle's {@code baseName}. */
  private static void spread(List<Measurement> out, String p, String b, String name, String unit, List<Executor> r,
      List<Executor> s, ToDoubleFunction<Executor> f, String baseName, ToDoubleFunction<Executor> g) {
    if (r.isEmpty() || s.isEmpty()) {
      return;
    }
    out.add(new Measurement(p + name + ".median", unit, median(r, f), b + baseName + ".median", median(s, g)));
    out.add(new Measurement(p + name + ".max", unit, max(r, f), b + baseName + ".max", max(s, g)));
  }

  private static void driver(List<Measurement> out, String p, String b, String name, String unit, List<App> r,
      List<App> s, ToDoubleFunction<Driver> f) {
    out.add(new Measurement(p + "driver." + name, unit, Median.of(r.stream().mapToDouble(a -> f.applyAsDouble(a.driver()))
        .toArray()), b + "driver." + name, Median.of(s.stream().mapToDouble(a -> f.applyAsDouble(a.driver())).toArray())));
  }

  static double median(List<Executor> executors, ToDoubleFunction<Executor> f) {
    return executors.isEmpty() ? 0 : Median.of(executors.stream().mapToDouble(f).toArray());
  }

  /** The smallest value; -1 (unlimited) counts as the largest. */
  static double min(List<Executor> executors, ToDoubleFunction<Executor> f) {
    double[] v = executors.stream().mapToDouble(f).filter(x -> x >= 0).toArray();
    return v.length == 0 ? -1 : java.util.Arrays.stream(v).min().orElse(-1);
  }

  static double max(List<Executor> executors, ToDoubleFunction<Executor> f) {
    return executors.stream().mapToDouble(f).max().orElse(0);
  }
}
