package io.sluice.transport.verbs.bench;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
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
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small READ benchmark for the SoftRoCE lab: the verbs provider against the tcp provider and
 * against perftest ({@code ib_read_bw}, {@code ib_read_lat} on the same device, see
 * {@link Perftest}) in the same run, same address, same sizes. For each READ size, rounds
 * alternate between the contenders (so drift on a shared host hits all alike) and the median
 * round counts; one 4 KiB READ at a time gives the latency (median of each round's median).
 * Request round trips (an echoing handler) are timed too: 256 bytes (one SEND each way on
 * verbs) and 64 KiB (staged and READ on verbs), against tcp. Every provider's first READ is
 * checked byte for byte. Every cell runs once unmeasured first (the JIT compiler's work is heavy
 * under emulation). Each READ cell also prints where the CPU time went ({@link CpuAccount}), and
 * each latency round how a READ's time splits: the posting call, until the thread that completes
 * it runs, and the hand-off to the waiting caller.
 *
 * <pre>
 *   VerbsReadBench ADDRESS [ROUNDS [PERFTEST_DEVICE]]
 * </pre>
 *
 * With PERFTEST_DEVICE (the RDMA device that holds ADDRESS), perftest is the baseline of every
 * READ figure, verbs and tcp, and the ratios to it are printed; without it, tcp is the baseline
 * of verbs. Requests always have tcp as their baseline.
 *
 * <p>Prints a table and then one line {@code RESULTS <json>}: an array of {"name", "unit",
 * "value", "baseline_name", "baseline_value"} records (the perf/results shape). Exit status 0
 * on success. Runs on one thread; not for concurrent use.
 */
public final class VerbsReadBench {
  private static final int SOURCE_BYTES = 32 << 20;
  private static final int IN_FLIGHT = 16;
  private static final int[] SIZES = {64 << 10, 1 << 20};
  private static final long BYTES_PER_ROUND = 32L << 20;
  private static final int LATENCY_READS = 400;
  private static final int[] REQUEST_SIZES = {256, 64 << 10};
  private static final long DEADLINE_SECONDS = 120;
  private static final String PERFTEST_LATENCY = "ib_read_lat.4KiB.latency_p50";

  private VerbsReadBench() {}

  public static void main(String[] args) throws TransportException {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: VerbsReadBench ADDRESS [ROUNDS [PERFTEST_DEVICE]]");
      System.exit(2);
    }
    int rounds = args.length >= 2 ? Integer.parseInt(args[1]) : 3;
    Perftest perftest = args.length == 3 ? new Perftest(args[2], args[0]) : null;
    System.exit(run(args[0], rounds, perftest, System.out));
  }

  private static String perftestBandwidth(int size) {
    return "ib_read_bw." + label(size) + ".inflight" + IN_FLIGHT;
  }

  private static String label(int size) {
    return size >= 1 << 20 ? (size >> 20) + "MiB" : (size >> 10) + "KiB";
  }

  /** Runs the benchmark; {@code perftest} may be null (then tcp is the baseline). */
  static int run(String address, int rounds, Perftest perftest, PrintStream out) throws TransportException {
    Map<String, String> base = Map.of(
        TransportOption.SECRET.key(), "verbs-bench",
        TransportOption.BIND_HOST.key(), address,
        TransportOption.ADVERTISE_HOST.key(), address,
        TransportOption.SHM_ENABLED.key(), "false");
    List<Endpoints> endpoints = new ArrayList<>();
    try {
      endpoints.add(Endpoints.open("verbs", new VerbsTransportProvider(), base));
      endpoints.add(Endpoints.open("tcp", Transports.provider("tcp"), base));
      // Unmeasured warm-up, so that the JIT compiler's work (heavy under emulation) stays out of
      // the figures as far as it can: every cell once, with less data.
      for (Endpoints e : endpoints) {
        for (int size : SIZES) {
          e.throughput(size, BYTES_PER_ROUND / 4);
        }
        e.latency(LATENCY_READS / 2);
      }
      List<String> json = new ArrayList<>();
      double verbsAt1MiB = 0;
      double perftestAt1MiB = 0;
      for (int size : SIZES) {
        String label = label(size);
        double[][] rates = new double[3][rounds];
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < 2; p++) {
            CpuAccount before = CpuAccount.sample();
            rates[p][round] = endpoints.get(p).throughput(size, BYTES_PER_ROUND);
            out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read %s round %d (%.1f MB/s): %s%n", endpoints.get(p).name(),
                label, round + 1, rates[p][round], CpuAccount.sample().since(before));
          }
          if (perftest != null) {
            CpuAccount before = CpuAccount.sample();
            rates[2][round] = perftest.readBandwidth(size, IN_FLIGHT, BYTES_PER_ROUND);
            out.printf(Locale.ROOT, "VERBS-BENCH cpu ib_read_bw read %s round %d (%.1f MB/s): %s%n", label, round + 1,
                rates[2][round], CpuAccount.sample().since(before).replaceFirst("; JVM threads.*", ""));
          }
        }
        double verbs = median(rates[0]);
        double tcp = median(rates[1]);
        String name = "read." + label + ".inflight" + IN_FLIGHT;
        if (perftest == null) {
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s   (medians of %d rounds)%n",
              label, IN_FLIGHT, verbs, tcp, rounds);
          json.add(record("verbs." + name, "MB/s", verbs, "tcp." + name, tcp));
        } else {
          double baseline = median(rates[2]);
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s   ib_read_bw %8.1f MB/s"
              + "   verbs/ib_read_bw %.2f   (medians of %d rounds)%n", label, IN_FLIGHT, verbs, tcp, baseline, verbs / baseline, rounds);
          json.add(record("verbs." + name, "MB/s", verbs, perftestBandwidth(size), baseline));
          json.add(record("tcp." + name, "MB/s", tcp, perftestBandwidth(size), baseline));
          if (size == 1 << 20) {
            verbsAt1MiB = verbs;
            perftestAt1MiB = baseline;
          }
        }
      }
      double[][] latencies = new double[3][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int p = 0; p < 2; p++) {
          CpuAccount before = CpuAccount.sample();
          Latency l = endpoints.get(p).latency(LATENCY_READS);
          latencies[p][round] = l.total();
          out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read 4KiB one at a time round %d (%.0f us: post %.0f, until the"
              + " completing thread %.0f, hand-off to the caller %.0f): %s%n", endpoints.get(p).name(), round + 1,
              l.total(), l.post(), l.completion(), l.handoff(), CpuAccount.sample().since(before));
        }
        if (perftest != null) {
          CpuAccount before = CpuAccount.sample();
          latencies[2][round] = perftest.readLatencyMicros(4096, LATENCY_READS);
          out.printf(Locale.ROOT, "VERBS-BENCH cpu ib_read_lat read 4KiB round %d (%.0f us): %s%n", round + 1,
              latencies[2][round], CpuAccount.sample().since(before).replaceFirst("; JVM threads.*", ""));
        }
      }
      double verbsLatency = median(latencies[0]);
      double tcpLatency = median(latencies[1]);
      if (perftest == null) {
        out.printf(Locale.ROOT, "VERBS-BENCH read 4KiB one at a time, median latency: verbs %.0f us   tcp %.0f us%n",
            verbsLatency, tcpLatency);
        json.add(record("verbs.read.4KiB.latency_p50", "us", verbsLatency, "tcp.read.4KiB.latency_p50", tcpLatency));
      } else {
        double baseline = median(latencies[2]);
        out.printf(Locale.ROOT, "VERBS-BENCH read 4KiB one at a time, median latency: verbs %.0f us   tcp %.0f us   ib_read_lat %.0f us"
            + "   verbs/ib_read_lat %.2f%n", verbsLatency, tcpLatency, baseline, verbsLatency / baseline);
        json.add(record("verbs.read.4KiB.latency_p50", "us", verbsLatency, PERFTEST_LATENCY, baseline));
        json.add(record("tcp.read.4KiB.latency_p50", "us", tcpLatency, PERFTEST_LATENCY, baseline));
        out.printf(Locale.ROOT, "VERBS-BENCH ratios: READ 1MiB x%d verbs/ib_read_bw %.2fx, READ 4KiB latency"
            + " verbs/ib_read_lat %.2fx%n", IN_FLIGHT, verbsAt1MiB / perftestAt1MiB, verbsLatency / baseline);
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
    } catch (BenchFailure | IllegalStateException e) {
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

  /** Median microseconds of a READ and of its parts (see {@link Endpoints#latency}). */
  private record Latency(double total, double post, double completion, double handoff) {}

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

    /** MB/s of READs of {@code size} with {@link #IN_FLIGHT} outstanding, {@code bytes} in all. */
    double throughput(int size, long bytes) {
      RemoteDescriptor d = source.descriptor();
      int slots = SOURCE_BYTES / size;
      long reads = bytes / size;
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
      return reads * size / 1e6 / seconds;
    }

    /**
     * Medians over {@code count} 4 KiB READs with nothing else in flight, in microseconds: the
     * whole READ, and its parts: the call that posts it, from then until the thread that
     * completes the future runs its callbacks, and from there until the waiting caller runs.
     */
    Latency latency(int count) {
      double[][] samples = new double[4][count];
      for (int i = 0; i < count; i++) {
        AtomicLong completed = new AtomicLong();
        long t0 = System.nanoTime();
        CompletableFuture<Void> read = connection.read(source.descriptor(), (long) i * 4096, target, 0, 4096);
        long posted = System.nanoTime();
        await(read.whenComplete((v, e) -> completed.set(System.nanoTime())), name + " READ");
        long woken = System.nanoTime();
        // A READ that completed before its callback was added runs the callback here: no hand-off.
        long done = Math.max(completed.get(), posted);
        samples[0][i] = (woken - t0) / 1e3;
        samples[1][i] = (posted - t0) / 1e3;
        samples[2][i] = (done - posted) / 1e3;
        samples[3][i] = (woken - done) / 1e3;
      }
      return new Latency(median(samples[0]), median(samples[1]), median(samples[2]), median(samples[3]));
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
