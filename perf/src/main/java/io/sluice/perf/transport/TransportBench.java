package io.sluice.perf.transport;

import io.sluice.perf.Measurement;
import io.sluice.perf.ResultsJson;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The transport benchmark (run by {@code perf/bin/transport-bench}). This JVM reads; a second JVM
 * ({@link BenchServer}) serves, over loopback. For each block size it measures, back to back so
 * machine noise hits all alike: a single-thread memcpy, a plain socket stream between the two
 * JVMs, then READ throughput of each provider with 1 and 8 READs in flight. Then the latency of
 * single 4 KiB READs beside a 4 KiB socket ping-pong. tcp figures are paired with the socket
 * baseline, shm throughput with memcpy. It writes {@link ResultsJson} and prints a table.
 *
 * <p>Not thread safe; one run at a time per JVM.
 */
public final class TransportBench {
  private TransportBench() {}

  public static void main(String[] args) {
    if (List.of(args).contains("--help")) {
      System.out.println(BenchOptions.USAGE);
      return;
    }
    BenchOptions options;
    try {
      options = BenchOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    try {
      run(options, System.out);
    } catch (IOException | RuntimeException e) {
      System.err.println("transport benchmark failed: " + e);
      e.printStackTrace();
      System.exit(1);
    }
    // The providers' worker threads must not keep a finished benchmark alive.
    System.exit(0);
  }

  /** Runs the benchmark, writes {@link BenchOptions#out()}, prints progress and the table; returns the results. */
  public static List<Measurement> run(BenchOptions o, PrintStream out) throws IOException {
    out.printf(Locale.ROOT, "Sluice transport benchmark%s: two JVMs on loopback, %d cores, Java %s, providers %s%n",
        o.quick() ? " (--quick: smoke run, figures are meaningless)" : "",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), o.providers());
    byte[] seed = new byte[16];
    new SecureRandom().nextBytes(seed);
    String secret = HexFormat.of().formatHex(seed);
    List<Measurement> results = new ArrayList<>();
    MemcpyBaseline memcpy = new MemcpyBaseline(o.regionBytes());
    try (ServerProcess server = ServerProcess.start(o.regionBytes(), o.providers(), secret);
        SocketBaseline socket = new SocketBaseline(inet(server.endpoints()))) {
      Map<String, ProviderClient> clients = new LinkedHashMap<>();
      try {
        for (String p : o.providers()) {
          clients.put(p, ProviderClient.open(server.endpoints().region(p), secret, o.destinationBytes()));
        }
        measureThroughput(o, out, memcpy, socket, clients, results);
        measureLatency(o, out, socket, clients, results);
      } finally {
        clients.values().forEach(ProviderClient::close);
      }
    }
    ResultsJson.write(o.out(), results);
    out.println();
    ResultTable.print(out, results, Goal.TRANSPORT, o.depths());
    out.println("results written to " + o.out().toAbsolutePath());
    return results;
  }

  private static void measureThroughput(BenchOptions o, PrintStream out, MemcpyBaseline memcpy,
      SocketBaseline socket, Map<String, ProviderClient> clients, List<Measurement> results) throws IOException {
    for (int block : o.blockSizes()) {
      double copy = memcpy.gigabytesPerSecond(block, o.warmup(), o.measure());
      progress(out, Names.memcpy(block), copy, Names.GBPS);
      double stream = socket.streamGigabytesPerSecond(block, o.warmup(), o.measure());
      progress(out, Names.socketStream(block), stream, Names.GBPS);
      for (Map.Entry<String, ProviderClient> c : clients.entrySet()) {
        boolean shm = c.getKey().equals("shm");
        for (int depth : o.depths()) {
          double v = c.getValue().bench().throughput(block, depth, o.warmup(), o.measure());
          String name = Names.readThroughput(c.getKey(), block, depth);
          progress(out, name, v, Names.GBPS);
          results.add(shm
              ? new Measurement(name, Names.GBPS, v, Names.memcpy(block), copy)
              : new Measurement(name, Names.GBPS, v, Names.socketStream(block), stream));
        }
      }
    }
  }

  private static void measureLatency(BenchOptions o, PrintStream out, SocketBaseline socket,
      Map<String, ProviderClient> clients, List<Measurement> results) throws IOException {
    int size = o.latencyBytes();
    LatencySamples ping = socket.pingPong(size, o.warmup(), o.measure(), o.maxLatencySamples());
    for (Percentile p : Percentile.values()) {
      progress(out, Names.socketPingPong(size, p), ping.micros(p), Names.MICROS);
    }
    for (Map.Entry<String, ProviderClient> c : clients.entrySet()) {
      LatencySamples reads = c.getValue().bench().latency(size, o.warmup(), o.measure(), o.maxLatencySamples());
      for (Percentile p : Percentile.values()) {
        String name = Names.readLatency(c.getKey(), size, p);
        progress(out, name, reads.micros(p), Names.MICROS);
        results.add(new Measurement(name, Names.MICROS, reads.micros(p),
            Names.socketPingPong(size, p), ping.micros(p)));
      }
    }
  }

  private static InetSocketAddress inet(ServerEndpoints e) {
    return new InetSocketAddress(e.socket().host(), e.socket().port());
  }

  private static void progress(PrintStream out, String name, double value, String unit) {
    out.printf(Locale.ROOT, "  %-32s %10.3f %s%n", name, value, unit);
    out.flush();
  }
}
