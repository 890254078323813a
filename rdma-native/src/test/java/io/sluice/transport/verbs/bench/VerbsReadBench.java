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
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
 * Every provider's first READ is checked byte for byte.
 *
 * <pre>
 *   VerbsReadBench ADDRESS [ROUNDS]
 * </pre>
 *
 * Prints a table and then one line {@code RESULTS <json>}: an array of {"name", "unit",
 * "value", "baseline_name", "baseline_value"} records with verbs as the value and tcp as the
 * baseline. Exit status 0 on success. Runs on one thread; not for concurrent use.
 */
public final class VerbsReadBench {
  private static final int SOURCE_BYTES = 32 << 20;
  private static final int IN_FLIGHT = 16;
  private static final int[] SIZES = {64 << 10, 1 << 20};
  private static final long BYTES_PER_ROUND = 96L << 20;
  private static final int LATENCY_READS = 400;
  private static final int[] REQUEST_SIZES = {256, 64 << 10};
  private static final long DEADLINE_SECONDS = 120;

  private VerbsReadBench() {}

  public static void main(String[] args) throws TransportException {
    if (args.length < 1 || args.length > 2) {
      System.err.println("usage: VerbsReadBench ADDRESS [ROUNDS]");
      System.exit(2);
    }
    int rounds = args.length == 2 ? Integer.parseInt(args[1]) : 3;
    System.exit(run(args[0], rounds, System.out));
  }

  static int run(String address, int rounds, PrintStream out) throws TransportException {
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
      for (int size : SIZES) {
        double[][] rates = new double[2][rounds];
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < 2; p++) {
            rates[p][round] = endpoints.get(p).throughput(size);
          }
        }
        double verbs = median(rates[0]);
        double tcp = median(rates[1]);
        String label = size >= 1 << 20 ? (size >> 20) + "MiB" : (size >> 10) + "KiB";
        out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s   (medians of %d rounds)%n",
            label, IN_FLIGHT, verbs, tcp, rounds);
        json.add(record("verbs.read." + label + ".inflight" + IN_FLIGHT, "MB/s", verbs,
            "tcp.read." + label + ".inflight" + IN_FLIGHT, tcp));
      }
      double verbsLatency = endpoints.get(0).latencyMicros();
      double tcpLatency = endpoints.get(1).latencyMicros();
      out.printf(Locale.ROOT, "VERBS-BENCH read 4KiB one at a time, median latency: verbs %.0f us   tcp %.0f us%n",
          verbsLatency, tcpLatency);
      json.add(record("verbs.read.4KiB.latency_p50", "us", verbsLatency, "tcp.read.4KiB.latency_p50", tcpLatency));
      for (int size : REQUEST_SIZES) {
        double verbsRequest = endpoints.get(0).requestMicros(size);
        double tcpRequest = endpoints.get(1).requestMicros(size);
        String label = size >= 1 << 10 ? (size >> 10) + "KiB" : size + "B";
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
