package io.sluice.perf.hadoop;

import io.sluice.hadoop.rpc.SluiceRpcEngine;
import io.sluice.hadoop.rpc.SluiceRpcServer;
import io.sluice.perf.bench.ByteSize;
import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RpcEngine;
import org.apache.hadoop.ipc.TestRpcBase.PBServerImpl;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;
import picocli.CommandLine.Option;

/**
 * Hadoop RPC over the Sluice engine beside the stock protobuf engine, with the workload of
 * Hadoop's own {@code RPCCallBenchmark} (its test protocol's {@code echo} with a message of N
 * characters, one proxy per client thread, server and clients in one JVM): 1, 8 and 32 client
 * threads, messages of 0 bytes, 4 KiB and 1 MiB. Both engines call the same {@link
 * SluiceRpcServer}, the stock client through its TCP listener. Cells run in interleaved rounds
 * (the engine order alternates); calls/s is the median round, latency percentiles pool all
 * rounds. Hadoop's RPCCallBenchmark itself is then run for the stock engine at 8 threads, as the
 * reference the harness's stock figures should match. Writes {@code perf/results/hadoop-rpc.json}.
 */
public final class HadoopRpcBench {
  private static final int SERVER_HANDLERS = 8;

  private HadoopRpcBench() {}

  public static void main(String[] args) {
    Cli.main("Hadoop RPC benchmark", args, BenchArgs::parse, o -> {
      run(o);
      return 0;
    });
  }

  /** Runs the benchmark, writes {@link BenchArgs#out()} and prints the table. */
  static void run(BenchArgs options) throws IOException, InterruptedException, TimeoutException {
    Configuration conf = new Configuration();
    byte[] secret = new byte[32];
    new SecureRandom().nextBytes(secret);
    conf.set("sluice.transport.secret", HexFormat.of().formatHex(secret));
    conf.set("sluice.transport.provider", options.provider());
    conf.set("sluice.transport.bindHost", "127.0.0.1");
    conf.set("sluice.transport.advertiseHost", "127.0.0.1");
    RPC.Server server = new SluiceRpcServer(TestRpcService.class,
        TestProtobufRpcProto.newReflectiveBlockingService(new PBServerImpl()), conf, "127.0.0.1", 0,
        SERVER_HANDLERS, 1, -1, false, null, null, null);
    server.start();
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    Map<String, List<long[]>> latencies = new LinkedHashMap<>();
    try {
      InetSocketAddress address = server.getListenerAddress();
      // Both engines' code paths are compiled before the first measured cell, so round one is not
      // a JIT warm-up for whichever engine runs first.
      if (options.jitWarmupMillis() > 0) {
        for (String engine : new String[] {"stock", "sluice"}) {
          for (int size : options.sizes()) {
            List<TestRpcService> proxies = proxies(engine, 8, address, conf);
            try {
              EchoCell.run(proxies, "x".repeat(size), 0, options.jitWarmupMillis());
            } finally {
              proxies.forEach(RPC::stopProxy);
            }
          }
        }
        System.out.println("JIT warm-up done");
      }
      for (int round = 0; round < options.rounds(); round++) {
        for (int size : options.sizes()) {
          String message = "x".repeat(size);
          for (int threads : options.threads()) {
            String[] order = round % 2 == 0 ? new String[] {"stock", "sluice"} : new String[] {"sluice", "stock"};
            for (String engine : order) {
              List<TestRpcService> proxies = proxies(engine, threads, address, conf);
              EchoCell.Result r;
              try {
                r = EchoCell.run(proxies, message, options.warmupMillis(), options.measureMillis());
              } finally {
                proxies.forEach(RPC::stopProxy);
              }
              String cell = cell(engine, size, threads);
              rates.computeIfAbsent(cell, k -> new ArrayList<>()).add(r.callsPerSecond());
              latencies.computeIfAbsent(cell, k -> new ArrayList<>()).add(r.latencyNanos());
              System.out.printf("round %d  %-32s %10.0f calls/s  p50 %8.1f us%n", round + 1, cell,
                  r.callsPerSecond(), r.percentileMicros(50));
            }
          }
        }
      }
    } finally {
      server.stop();
    }
    List<Measurement> results = new ArrayList<>();
    for (int size : options.sizes()) {
      for (int threads : options.threads()) {
        String sluice = cell("sluice", size, threads);
        String stock = cell("stock", size, threads);
        double sluiceRate = Median.of(rates.get(sluice));
        double stockRate = Median.of(rates.get(stock));
        results.add(new Measurement(sluice + ".calls", "calls/s", sluiceRate, stock + ".calls", stockRate));
        EchoCell.Result sluicePooled = new EchoCell.Result(sluiceRate, pool(latencies.get(sluice)));
        EchoCell.Result stockPooled = new EchoCell.Result(stockRate, pool(latencies.get(stock)));
        for (int p : new int[] {50, 99}) {
          results.add(new Measurement(sluice + ".p" + p, "us", sluicePooled.percentileMicros(p),
              stock + ".p" + p, stockPooled.percentileMicros(p)));
        }
        if (size >= 1 << 20) {
          // Payload bytes moved per second, both directions.
          double mib = 2.0 * size / (1 << 20);
          results.add(new Measurement(sluice + ".throughput", "MiB/s", sluiceRate * mib,
              stock + ".throughput", stockRate * mib));
        }
      }
    }
    if (options.reference()) {
      for (int size : options.sizes()) {
        double reference = RpcCallBenchmarkRun.callsPerSecond(8, SERVER_HANDLERS, size, options.referenceSeconds());
        String stock = cell("stock", size, 8);
        results.add(new Measurement("hadoop.RPCCallBenchmark.protobuf.echo." + label(size) + ".threads8.calls",
            "calls/s", reference, stock + ".calls", Median.of(rates.get(stock))));
      }
    }
    ResultsFile.write(options.out(), results);
    System.out.println();
    ResultTable.print(System.out, results);
    System.out.println("results: " + options.out());
  }

  private static List<TestRpcService> proxies(String engine, int threads, InetSocketAddress address,
      Configuration conf) throws IOException {
    RpcEngine rpcEngine = engine.equals("sluice") ? new SluiceRpcEngine() : new ProtobufRpcEngine2();
    List<TestRpcService> proxies = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      proxies.add(rpcEngine.getProxy(TestRpcService.class, 1, address, UserGroupInformation.getCurrentUser(),
          conf, NetUtils.getDefaultSocketFactory(conf), 0, null).getProxy());
    }
    return proxies;
  }

  static String cell(String engine, int size, int threads) {
    return "hadoop." + engine + ".echo." + label(size) + ".threads" + threads;
  }

  static String label(int size) {
    return size == 0 ? "0B" : ByteSize.label(size);
  }


  private static long[] pool(List<long[]> parts) {
    return parts.stream().flatMapToLong(java.util.Arrays::stream).toArray();
  }

  /** Command-line options. */
  record BenchArgs(Path out, int rounds, long warmupMillis, long measureMillis, String provider, boolean reference,
      int referenceSeconds, int[] threads, int[] sizes, long jitWarmupMillis) {

    static final Cli.Command COMMAND = new Cli.Command("hadoop-rpc-bench", "hadoop-rpc",
        "Echo calls over the Sluice RpcEngine beside Hadoop's stock protobuf engine, the workload of"
            + " Hadoop's RPCCallBenchmark, plus RPCCallBenchmark itself for the stock engine.",
        "Smoke run: one short round, no JIT warm-up, no RPCCallBenchmark (the figures are meaningless).");

    /** The command's own options; {@link #parse} turns them into options. */
    static final class Flags {
      @Option(names = "--rounds", paramLabel = "N", description = "Measured rounds (default 3).")
      int rounds = 3;

      @Option(names = "--provider", paramLabel = "NAME",
          description = "The Sluice engine's transport provider: tcp, shm, auto or verbs (default tcp).")
      String provider = "tcp";

      @Option(names = "--threads", split = ",", paramLabel = "LIST", description = "Client threads (default 1,8,32).")
      int[] threads = {1, 8, 32};

      @Option(names = "--sizes", split = ",", paramLabel = "LIST",
          description = "Message sizes in characters (default 0,4096,1048576).")
      int[] sizes = {0, 4096, 1 << 20};

      @Option(names = "--no-reference", description = "Skip Hadoop's RPCCallBenchmark.")
      boolean noReference;
    }

    static BenchArgs parse(String[] args) {
      Cli.Parsed<Flags> line = Cli.parse(COMMAND, new Flags(), args);
      Flags f = line.options();
      if (f.rounds < 1) {
        throw new IllegalArgumentException("--rounds must be at least 1, got " + f.rounds);
      }
      nonNegative(f.threads, "--threads");
      nonNegative(f.sizes, "--sizes");
      if (line.quick()) {
        return new BenchArgs(line.out(), 1, 100, 300,
            f.provider, false, 1, f.threads, f.sizes, 0);
      }
      return new BenchArgs(line.out(), f.rounds, 700, 2_500,
          f.provider, !f.noReference, 5, f.threads, f.sizes, 2_000);
    }

    private static void nonNegative(int[] values, String option) {
      for (int v : values) {
        if (v < 0) {
          throw new IllegalArgumentException("negative value " + v + " in " + option);
        }
      }
    }
  }
}
