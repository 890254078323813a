package io.sluice.transport.verbs.bench;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.tcp.TcpTransportProvider;
import io.sluice.transport.verbs.VerbsTransportProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A small READ benchmark for the SoftRoCE lab: the verbs provider against the tcp provider in
 * the same run, same JVM, same address, same sizes. For each READ size, rounds alternate
 * between the providers (so drift on a shared host hits both alike) and the median round
 * counts; one 4 KiB READ at a time gives the latency. Request round trips (an echoing handler)
 * are timed too: 256 bytes (one SEND each way on verbs) and 64 KiB (staged and READ on verbs).
 * Every provider's first READ is checked byte for byte. Each READ cell also prints where the
 * CPU time went ({@link CpuAccount}).
 *
 * <pre>
 *   VerbsReadBench ADDRESS [ROUNDS [PERFTEST_FILE]]
 * </pre>
 *
 * PERFTEST_FILE holds the figures of perftest's {@code ib_read_bw} and {@code ib_read_lat},
 * measured on the same device in the same run, one {@code NAME VALUE} a line:
 * {@code ib_read_bw.64KiB.inflight16} and {@code ib_read_bw.1MiB.inflight16} in MB/s (10^6
 * bytes), {@code ib_read_lat.4KiB.latency_p50} in microseconds. With it, perftest is the
 * baseline of every READ figure, verbs and tcp, and the goals (verbs at least 0.8x
 * {@code ib_read_bw} at 1 MiB, at most 1.5x {@code ib_read_lat}) are printed, not enforced;
 * without it, tcp is the baseline of verbs. Requests always have tcp as their baseline.
 *
 * <p>Prints a table and then one line {@code RESULTS <json>}: an array of {"name", "unit",
 * "value", "baseline_name", "baseline_value"} records (the perf/results shape). Exit status 0
 * on success. Runs on one thread; not for concurrent use.
 */
public final class VerbsReadBench {
  private static final int SOURCE_BYTES = 32 << 20;
  private static final int IN_FLIGHT = 16;
  private static final int[] SIZES = {64 << 10, 1 << 20};
  private static final long BYTES_PER_ROUND = 96L << 20;
  private static final int LATENCY_READS = 400;
  private static final int[] REQUEST_SIZES = {256, 64 << 10};
  private static final long DEADLINE_SECONDS = 120;
  private static final String PERFTEST_LATENCY = "ib_read_lat.4KiB.latency_p50";

  private VerbsReadBench() {}

  public static void main(String[] args) throws TransportException, IOException {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: VerbsReadBench ADDRESS [ROUNDS [PERFTEST_FILE]]");
      System.exit(2);
    }
    int rounds = args.length >= 2 ? Integer.parseInt(args[1]) : 3;
    Map<String, Double> perftest = args.length == 3 ? readFigures(Path.of(args[2])) : Map.of();
    System.exit(run(args[0], rounds, perftest, System.out));
  }

  /** {@code NAME VALUE} lines; every name the benchmark compares with must be there. */
  static Map<String, Double> readFigures(Path file) throws IOException {
    Map<String, Double> figures = new TreeMap<>();
    for (String line : Files.readAllLines(file)) {
      String[] f = line.trim().split("\\s+");
      if (f.length == 2) {
        figures.put(f[0], Double.parseDouble(f[1]));
      } else if (!line.isBlank()) {
        throw new IllegalArgumentException(file + ": not a NAME VALUE line: " + line);
      }
    }
    List<String> needed = new ArrayList<>();
    for (int size : SIZES) {
      needed.add(perftestBandwidth(size));
    }
    needed.add(PERFTEST_LATENCY);
    for (String name : needed) {
      if (!figures.containsKey(name)) {
        throw new IllegalArgumentException(file + " has no " + name + " (perftest did not run?)");
      }
    }
    return figures;
  }

  private static String perftestBandwidth(int size) {
    return "ib_read_bw." + label(size) + ".inflight" + IN_FLIGHT;
  }

  private static String label(int size) {
    return size >= 1 << 20 ? (size >> 20) + "MiB" : (size >> 10) + "KiB";
  }

  static int run(String address, int rounds, Map<String, Double> perftest, PrintStream out) throws TransportException {
    Map<String, String> base = Map.of(
        TransportOption.SECRET.key(), "verbs-bench",
        TransportOption.BIND_HOST.key(), address,
        TransportOption.ADVERTISE_HOST.key(), address,
        TransportOption.SHM_ENABLED.key(), "false");
    List<Endpoints> endpoints = new ArrayList<>();
    try {
      endpoints.add(Endpoints.open("verbs", new VerbsTransportProvider(), base));
      endpoints.add(Endpoints.open("tcp", TcpTransportProvider.tcp(), base));
      List<String> json = new ArrayList<>();
      double verbsAt1MiB = 0;
      for (int size : SIZES) {
        String label = label(size);
        double[][] rates = new double[2][rounds];
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < 2; p++) {
            CpuAccount before = CpuAccount.sample();
            rates[p][round] = endpoints.get(p).throughput(size);
            out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read %s round %d (%.1f MB/s): %s%n", endpoints.get(p).name(),
                label, round + 1, rates[p][round], CpuAccount.sample().since(before));
          }
        }
        double verbs = median(rates[0]);
        double tcp = median(rates[1]);
        if (size == 1 << 20) {
          verbsAt1MiB = verbs;
        }
        String name = "read." + label + ".inflight" + IN_FLIGHT;
        if (perftest.isEmpty()) {
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s   (medians of %d rounds)%n",
              label, IN_FLIGHT, verbs, tcp, rounds);
          json.add(record("verbs." + name, "MB/s", verbs, "tcp." + name, tcp));
        } else {
          double baseline = perftest.get(perftestBandwidth(size));
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s   ib_read_bw %8.1f MB/s"
              + "   verbs/ib_read_bw %.2f   (medians of %d rounds)%n", label, IN_FLIGHT, verbs, tcp, baseline, verbs / baseline, rounds);
          json.add(record("verbs." + name, "MB/s", verbs, perftestBandwidth(size), baseline));
          json.add(record("tcp." + name, "MB/s", tcp, perftestBandwidth(size), baseline));
        }
      }
      double[] latency = new double[2];
      for (int p = 0; p < 2; p++) {
        CpuAccount before = CpuAccount.sample();
        latency[p] = endpoints.get(p).latencyMicros();
        out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read 4KiB one at a time (%.0f us): %s%n", endpoints.get(p).name(),
            latency[p], CpuAccount.sample().since(before));
      }
      double verbsLatency = latency[0];
      double tcpLatency = latency[1];
      if (perftest.isEmpty()) {
        out.printf(Locale.ROOT, "VERBS-BENCH read 4KiB one at a time, median latency: verbs %.0f us   tcp %.0f us%n",
            verbsLatency, tcpLatency);
        json.add(record("verbs.read.4KiB.latency_p50", "us", verbsLatency, "tcp.read.4KiB.latency_p50", tcpLatency));
      } else {
        double baseline = perftest.get(PERFTEST_LATENCY);
        out.printf(Locale.ROOT, "VERBS-BENCH read 4KiB one at a time, median latency: verbs %.0f us   tcp %.0f us   ib_read_lat %.0f us"
            + "   verbs/ib_read_lat %.2f%n", verbsLatency, tcpLatency, baseline, verbsLatency / baseline);
        json.add(record("verbs.read.4KiB.latency_p50", "us", verbsLatency, PERFTEST_LATENCY, baseline));
        json.add(record("tcp.read.4KiB.latency_p50", "us", tcpLatency, PERFTEST_LATENCY, baseline));
        double bandwidthRatio = verbsAt1MiB / perftest.get(perftestBandwidth(1 << 20));
        double latencyRatio = verbsLatency / baseline;
        out.printf(Locale.ROOT, "VERBS-BENCH goal READ 1MiB x%d at least 0.8x ib_read_bw: %.2fx, %s%n", IN_FLIGHT,
            bandwidthRatio, bandwidthRatio >= 0.8 ? "met" : "missed");
        out.printf(Locale.ROOT, "VERBS-BENCH goal READ 4KiB latency at most 1.5x ib_read_lat: %.2fx, %s%n",
            latencyRatio, latencyRatio <= 1.5 ? "met" : "missed");
      }
      for (int size : REQUEST_SIZES) {
        double verbsRequest = endpoints.get(0).requestMicros(size);
        double tcpRequest = endpoints.get(1).requestMicros(size);
        String label = size >= 1 << 10 ? label(size) : size + "B";
        out.printf(Locale.ROOT, "VERBS-BENCH request %s echoed, median round trip: verbs %.0f us   tcp %.0f us%n",
            label, verbsRequest, tcpRequest);
        json.add(record("verbs.request." + label + ".roundtrip_p50", "us", verbsRequest,
            "tcp.request." + label + ".roundtrip_p50", tcpRequest));
      }
      out.println("RESULTS [" + String.join(", ", json) + "]");
      return 0;
    } catch (BenchFailure e) {
      out.println("VERBS-BENCH failed: " + e.getMessage());
      return 1;
    } finally {
      endpoints.forEach(Endpoints::close);
    }
  }

  /** One results record in the perf/results shape. */
  private static String record(String name, String unit, double value, String baselineName, double baseline) {
    return String.format(Locale.ROOT,
        "{\"name\": \"%s\", \"unit\": \"%s\", \"value\": %.6g, \"baseline_name\": \"%s\", \"baseline_value\": %.6g}",
        name, unit, value, baselineName, baseline);
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  /** A failed or hung READ; ends the benchmark. */
  private static final class BenchFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BenchFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** A server and a client transport of one provider, connected, with their regions. */
  private record Endpoints(String name, Transport server, Transport client, RegisteredRegion source,
      RegisteredRegion target, Connection connection) implements AutoCloseable {

    static Endpoints open(String name, TransportProvider provider, Map<String, String> base) throws TransportException {
      TransportConfig config = TransportConfig.of(base).with(Map.of(TransportOption.PROVIDER.key(), name));
      provider.ensureAvailability();
      Transport server = provider.open(config, (peer, request) -> CompletableFuture.completedFuture(request));
      Transport client = provider.open(config, MessageHandler.REJECT_ALL);
      RegisteredRegion source = server.allocate(SOURCE_BYTES);
      ByteBuffer b = source.buffer();
      for (int i = 0; b.remaining() >= 8; i++) {
        b.putLong(i * 0x9E3779B97F4A7C15L);
      }
      RegisteredRegion target = client.allocate(IN_FLIGHT * SIZES[SIZES.length - 1]);
      Connection c = await(client.connect(server.localAddress()), "connect " + name);
      Endpoints e = new Endpoints(name, server, client, source, target, c);
      e.verify();
      return e;
    }

    void verify() {
      int len = target.buffer().capacity();
      await(connection.read(source.descriptor(), 0, target, 0, len), name + " verification READ");
      if (!source.buffer().limit(len).equals(target.buffer())) {
        throw new BenchFailure(name + ": READ bytes differ from the source", null);
      }
    }

    /** MB/s of READs of {@code size} with {@link #IN_FLIGHT} outstanding. */
    double throughput(int size) {
      RemoteDescriptor d = source.descriptor();
      int slots = SOURCE_BYTES / size;
      long reads = BYTES_PER_ROUND / size;
      List<CompletableFuture<Void>> window = new ArrayList<>();
      long started = System.nanoTime();
      for (long i = 0; i < reads; i++) {
        if (window.size() == IN_FLIGHT) {
          await(window.remove(0), name + " READ");
        }
        int slot = (int) (i % IN_FLIGHT);
        window.add(connection.readBatch(List.of(new ReadRequest(d, (long) (i * 7 % slots) * size, target,
            (long) slot * size, size))).get(0));
      }
      window.forEach(f -> await(f, name + " READ"));
      double seconds = (System.nanoTime() - started) / 1e9;
      return BYTES_PER_ROUND / 1e6 / seconds;
    }

    /** Median microseconds of a 4 KiB READ with nothing else in flight. */
    double latencyMicros() {
      double[] samples = new double[LATENCY_READS];
      for (int i = 0; i < LATENCY_READS; i++) {
        long t0 = System.nanoTime();
        await(connection.read(source.descriptor(), (long) i * 4096, target, 0, 4096), name + " READ");
        samples[i] = (System.nanoTime() - t0) / 1e3;
      }
      return median(samples);
    }

    /** Median microseconds of one request of {@code size} bytes echoed back, nothing else in flight. */
    double requestMicros(int size) {
      ByteBuffer request = ByteBuffer.allocate(size);
      double[] samples = new double[LATENCY_READS];
      for (int i = 0; i < LATENCY_READS; i++) {
        request.putInt(0, i);
        long t0 = System.nanoTime();
        ByteBuffer answer = await(connection.request(request), name + " request");
        samples[i] = (System.nanoTime() - t0) / 1e3;
        if (answer.remaining() != size || answer.getInt(answer.position()) != i) {
          throw new BenchFailure(name + ": the echoed request differs", null);
        }
      }
      return median(samples);
    }

    @Override
    public void close() {
      connection.close();
      source.close();
      target.close();
      client.close();
      server.close();
    }
  }

  private static <T> T await(CompletableFuture<T> f, String what) {
    try {
      return f.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new BenchFailure(what + " failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new BenchFailure(what + " did not complete within " + DEADLINE_SECONDS + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchFailure("interrupted", e);
    }
  }
}
