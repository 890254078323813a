package io.sluice.perf.transport;

import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Loopback;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import io.sluice.transport.TransportOption;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.EngineChoice;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The transport benchmark (run by {@code perf/bin/transport-bench}). This JVM reads; a second JVM
 * ({@link BenchServer}) serves, over loopback. For each block size it measures, in interleaved
 * {@link Rounds} so machine noise hits all alike: a single-thread memcpy, a plain socket stream
 * between the two JVMs, and READ throughput of each provider with 1 and 8 READs in flight. Then
 * the latency of single 4 KiB READs beside a 4 KiB socket ping-pong, and the latency of a new
 * connection (connect, handshake, shm attach) beside a plain socket's connect and first round trip. With {@code tcp-aes}
 * or {@code tcp-aes-jdk} the cipher alone ({@link CipherBaseline}) of each AES-GCM engine (OpenSSL's
 * and the JDK's) is measured in the same rounds as the ceiling of encrypted READs. Plain tcp
 * throughput is paired with the socket stream, encrypted tcp with plain tcp of the same block and
 * depth, shm with memcpy; latencies with the socket ping-pong. With shm, also what allocating
 * and filling a region costs ({@link AllocationBench}) beside a sparse file of the same size. It
 * writes a {@link ResultsFile} and prints a {@link ResultTable}.
 *
 * <p>Not thread safe; one run at a time per JVM.
 */
public final class TransportBench {
  private TransportBench() {}

  public static void main(String[] args) {
    Cli.main("transport benchmark", args, BenchOptions::parse, o -> {
      run(o, System.out);
      return 0;
    });
  }

  /** Runs the benchmark, writes {@link BenchOptions#out()}, prints progress and the table; returns the results. */
  public static List<Measurement> run(BenchOptions o, PrintStream out) throws IOException {
    out.printf(Locale.ROOT, "Sluice transport benchmark%s: two JVMs on loopback, %d cores, Java %s, providers %s%n",
        o.quick() ? " (--quick: smoke run, figures are meaningless)" : "",
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), o.providers());
    for (String p : o.providers()) {
      Loopback.requireAvailable(p, LoopbackTransports.providerOf(p), "choose others with --providers");
    }
    String secret = Loopback.newSecret();
    List<Measurement> results = new ArrayList<>();
    MemcpyBaseline memcpy = new MemcpyBaseline(o.regionBytes());
    List<CipherBaseline> ciphers = new ArrayList<>();
    boolean sealing = o.providers().stream().anyMatch(LoopbackTransports::encrypted);
    boolean tagging = o.providers().contains("tcp");
    if (sealing) {
      EngineChoice auto = EngineChoice.choose(EngineChoice.AUTO);
      out.printf(Locale.ROOT, "AES-GCM: %s chooses %s (%s; %s); %s forces the JDK's%n",
          LoopbackTransports.TCP_ENCRYPTED, auto.engine().id(), auto.engine().description(), auto.reason(),
          LoopbackTransports.TCP_ENCRYPTED_JDK);
    }
    if (sealing || tagging) {
      for (AesGcmEngine e : AesGcmEngine.values()) {
        if (e.unavailabilityCause().isPresent()) {
          out.println("AES-GCM engine " + e.id() + " not measured: " + e.unavailabilityCause().get());
          continue;
        }
        if (sealing) {
          ciphers.add(new CipherBaseline(o.regionBytes(), CipherBaseline.Work.SEAL, e));
        }
        if (tagging) {
          ciphers.add(new CipherBaseline(o.regionBytes(), CipherBaseline.Work.GMAC, e));
        }
      }
    }
    if (tagging) {
      ciphers.add(new CipherBaseline(o.regionBytes(), CipherBaseline.Work.HMAC, null));
    }
    try (ServerProcess server = ServerProcess.start(o.regionBytes(), o.providers(), secret);
        SocketBaseline socket = new SocketBaseline(inet(server.endpoints()))) {
      Map<String, ProviderClient> clients = new LinkedHashMap<>();
      try {
        for (String p : o.providers()) {
          clients.put(p, ProviderClient.open(server.endpoints().region(p), secret, o.destinationBytes()));
        }
        measureThroughput(o, out, memcpy, ciphers, socket, clients, results);
        measureLatency(o, out, socket, clients, results);
        measureConnects(o, out, socket, clients, results);
        if (clients.containsKey("shm")) {
          measureAllocation(o, out, results);
        }
      } finally {
        clients.values().forEach(ProviderClient::close);
      }
    }
    ResultsFile.write(o.out(), results);
    out.println();
    ResultTable.print(out, results);
    out.println("results written to " + o.out().toAbsolutePath());
    return results;
  }

  private static void measureThroughput(BenchOptions o, PrintStream out, MemcpyBaseline memcpy,
      List<CipherBaseline> ciphers, SocketBaseline socket, Map<String, ProviderClient> clients,
      List<Measurement> results)
      throws IOException {
    Rounds rounds = new Rounds(o, out);
    for (int block : o.blockSizes()) {
      Map<String, Rounds.ThroughputCell> cells = new LinkedHashMap<>();
      cells.put(Names.memcpy(block), (warmup, measure) -> memcpy.gigabytesPerSecond(block, warmup, measure));
      cells.put(Names.socketStream(block),
          (warmup, measure) -> socket.streamGigabytesPerSecond(block, warmup, measure));
      for (CipherBaseline cipher : ciphers) {
        cells.put(cipher.name(block), (warmup, measure) -> cipher.gigabytesPerSecond(block, warmup, measure));
      }
      for (Map.Entry<String, ProviderClient> c : clients.entrySet()) {
        ReadBench bench = c.getValue().bench();
        for (int depth : o.depths()) {
          cells.put(Names.readThroughput(c.getKey(), block, depth),
              (warmup, measure) -> bench.throughput(block, depth, warmup, measure));
        }
      }
      Map<String, Double> medians = rounds.throughput(cells);
      for (CipherBaseline cipher : ciphers) {
        String name = cipher.name(block);
        results.add(new Measurement(name, Names.GBPS, medians.get(name), Names.memcpy(block),
            medians.get(Names.memcpy(block))));
      }
      for (String provider : clients.keySet()) {
        for (int depth : o.depths()) {
          String name = Names.readThroughput(provider, block, depth);
          String baseline = baseline(provider, block, depth, clients.keySet());
          results.add(new Measurement(name, Names.GBPS, medians.get(name), baseline, medians.get(baseline)));
        }
      }
    }
  }

  /**
   * What a provider's READ throughput is held against: memcpy for shm, the plain tcp READ of the
   * same block and depth for encrypted tcp (when measured), the socket stream for tcp.
   */
  private static String baseline(String provider, int block, int depth, Set<String> providers) {
    if (provider.equals("shm")) {
      return Names.memcpy(block);
    }
    if (LoopbackTransports.encrypted(provider) && providers.contains("tcp")) {
      return Names.readThroughput("tcp", block, depth);
    }
    return Names.socketStream(block);
  }

  private static void measureLatency(BenchOptions o, PrintStream out, SocketBaseline socket,
      Map<String, ProviderClient> clients, List<Measurement> results) throws IOException {
    int size = o.latencyBytes();
    Map<String, Rounds.LatencyCell> cells = new LinkedHashMap<>();
    String ping = Names.socketPingPong(size);
    cells.put(ping, (warmup, measure, samples) -> socket.pingPong(size, warmup, measure, samples));
    for (Map.Entry<String, ProviderClient> c : clients.entrySet()) {
      ReadBench bench = c.getValue().bench();
      cells.put(Names.readLatency(c.getKey(), size),
          (warmup, measure, samples) -> bench.latency(size, warmup, measure, samples));
    }
    Map<String, LatencySamples> samples = new Rounds(o, out).latency(cells);
    for (String provider : clients.keySet()) {
      for (Percentile p : Percentile.values()) {
        results.add(new Measurement(Names.readLatency(provider, size, p), Names.MICROS,
            samples.get(Names.readLatency(provider, size)).micros(p),
            Names.socketPingPong(size, p), samples.get(ping).micros(p)));
      }
    }
  }

  /**
   * New connections: each provider's connect (TCP, handshake, and for shm the attach) beside a
   * plain socket's connect and first round trip, in the same interleaved rounds.
   */
  private static void measureConnects(BenchOptions o, PrintStream out, SocketBaseline socket,
      Map<String, ProviderClient> clients, List<Measurement> results) throws IOException {
    Map<String, Rounds.LatencyCell> cells = new LinkedHashMap<>();
    String plain = Names.connectLatency("socket");
    cells.put(plain, socket::connectLatency);
    for (Map.Entry<String, ProviderClient> c : clients.entrySet()) {
      cells.put(Names.connectLatency(c.getKey()), c.getValue()::connectLatency);
    }
    Map<String, LatencySamples> samples = new Rounds(o, out).latency(cells);
    for (String provider : clients.keySet()) {
      for (Percentile p : Percentile.values()) {
        results.add(new Measurement(Names.connectLatency(provider, p), Names.MICROS,
            samples.get(Names.connectLatency(provider)).micros(p),
            Names.connectLatency("socket", p), samples.get(plain).micros(p)));
      }
    }
  }

  private static void measureAllocation(BenchOptions o, PrintStream out, List<Measurement> results)
      throws IOException {
    try (AllocationBench bench = new AllocationBench(Path.of(TransportOption.SHM_DIR.defaultValue()))) {
      Rounds rounds = new Rounds(o, out);
      for (int block : o.blockSizes()) {
        Map<String, Rounds.ThroughputCell> cells = new LinkedHashMap<>();
        cells.put(Names.sparseAllocate(block),
            (warmup, measure) -> bench.sparseGigabytesPerSecond(block, warmup, measure));
        cells.put(Names.shmAllocate(block),
            (warmup, measure) -> bench.reservedGigabytesPerSecond(block, warmup, measure));
        Map<String, Double> medians = rounds.throughput(cells);
        results.add(new Measurement(Names.shmAllocate(block), Names.GBPS, medians.get(Names.shmAllocate(block)),
            Names.sparseAllocate(block), medians.get(Names.sparseAllocate(block))));
      }
    }
  }

  private static InetSocketAddress inet(ServerEndpoints e) {
    return new InetSocketAddress(e.socket().host(), e.socket().port());
  }
}
