package io.sluice.transport.verbs.bench;

import io.sluice.transport.Checksums;
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
 * A READ benchmark for the SoftRoCE lab that a reader of perftest recognizes: the verbs
 * provider against the tcp provider and against perftest ({@code ib_read_bw}, {@code
 * ib_read_lat} on the same device, see {@link Perftest}) in the same run, same address, same
 * sizes, in alternating rounds (so drift on a shared host hits all alike; the median round
 * counts):
 *
 * <ul>
 *   <li>latency, one READ at a time, 4 KiB and 64 KiB: p50 and p99 of each round, beside
 *       {@code ib_read_lat}'s typical and 99% figures;
 *   <li>throughput with 16 READs in flight, 64 KiB and 1 MiB, beside {@code ib_read_bw}; and
 *       verbs again with each READ checked against its source's CRC32C on the reading thread
 *       (what {@code verifyReads} costs a reader), beside the unchecked verbs figure;
 *   <li>request round trips (an echoing handler), 256 B (one SEND each way on verbs) and
 *       64 KiB (staged and READ on verbs), against tcp.
 * </ul>
 *
 * Verbs runs twice: with the provider's default busy polling and with busy polling off
 * ({@code sluice.transport.verbs.busyPoll=0}, named {@code verbs.busyPoll0}), so the default is
 * measured against the alternative in the same rounds. Every provider's first READ is checked
 * byte for byte. Every cell runs once unmeasured first (the JIT compiler's work is heavy under
 * emulation). Each READ cell also prints where the CPU time went ({@link CpuAccount}), and each
 * latency round how a READ's time splits: the posting call, until the thread that completes it
 * runs, and the hand-off to the waiting caller.
 *
 * <pre>
 *   VerbsReadBench [--quick] [--prefix NAME] ADDRESS [ROUNDS [PERFTEST_DEVICE]]
 * </pre>
 *
 * With PERFTEST_DEVICE (the RDMA device that holds ADDRESS), perftest is the baseline of every
 * READ figure and the ratios to it are printed; without it, tcp is the baseline of verbs.
 * Requests always have tcp as their baseline. {@code --quick} runs one round of less data.
 * {@code --prefix NAME} names the records of a second device apart from the first: the verbs
 * provider's {@code verbs.X} become {@code NAME.X}, every other name (tcp, perftest) gets
 * {@code NAME.} in front, e.g. {@code siw.read.64KiB.inflight16} beside {@code
 * siw.ib_read_bw.64KiB.inflight16} for the soft-iWARP device.
 *
 * <p>Prints a table and then one line {@code RESULTS <json>}: an array of {"name", "unit",
 * "value", "baseline_name", "baseline_value"} records (the perf/results shape). Exit status 0
 * on success. Runs on one thread; not for concurrent use.
 */
public final class VerbsReadBench {
  private static final int SOURCE_BYTES = 32 << 20;
  private static final int IN_FLIGHT = 16;
  private static final int[] SIZES = {64 << 10, 1 << 20};
  private static final int[] LATENCY_SIZES = {4 << 10, 64 << 10};
  private static final int[] REQUEST_SIZES = {256, 64 << 10};
  private static final long DEADLINE_SECONDS = 120;
  private static final String NO_POLL = "verbs.busyPoll0";

  /** How much each cell measures. */
  private record Scale(int rounds, long bytesPerRound, int latencyReads) {}

  private VerbsReadBench() {}

  public static void main(String[] args) throws TransportException {
    List<String> rest = new ArrayList<>(List.of(args));
    boolean quick = rest.remove("--quick");
    String prefix = "";
    int at = rest.indexOf("--prefix");
    if (at >= 0) {
      if (at + 1 >= rest.size() || !rest.get(at + 1).matches("[a-z][a-z0-9]*")) {
        System.err.println("VerbsReadBench: --prefix needs a name of lower-case letters and digits");
        System.exit(2);
      }
      prefix = rest.remove(at + 1);
      rest.remove(at);
    }
    if (rest.size() < 1 || rest.size() > 3) {
      System.err.println("usage: VerbsReadBench [--quick] [--prefix NAME] ADDRESS [ROUNDS [PERFTEST_DEVICE]]");
      System.exit(2);
    }
    int rounds = quick ? 1 : rest.size() >= 2 ? Integer.parseInt(rest.get(1)) : 3;
    Scale scale = quick ? new Scale(1, 4L << 20, 100) : new Scale(rounds, 32L << 20, 400);
    Perftest perftest = rest.size() == 3 ? new Perftest(rest.get(2), rest.get(0)) : null;
    System.exit(run(rest.get(0), scale, perftest, new Names(prefix), System.out));
  }

  /** A fresh 256-bit secret for this run's transports, as the transport requires (at least 128 bits). */
  private static String secret() {
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    return java.util.HexFormat.of().formatHex(key);
  }

  private static String label(int size) {
    return size >= 1 << 20 ? (size >> 20) + "MiB" : size >= 1 << 10 ? (size >> 10) + "KiB" : size + "B";
  }

  /** Runs the benchmark; {@code perftest} may be null (then tcp is the baseline). */
  static int run(String address, Scale scale, Perftest perftest, Names names, PrintStream out)
      throws TransportException {
    Map<String, String> base = Map.of(
        TransportOption.SECRET.key(), secret(),
        TransportOption.BIND_HOST.key(), address,
        TransportOption.ADVERTISE_HOST.key(), address,
        TransportOption.SHM_ENABLED.key(), "false");
    List<Endpoints> endpoints = new ArrayList<>();
    int rounds = scale.rounds();
    try {
      endpoints.add(Endpoints.open("verbs", "verbs", new VerbsTransportProvider(), base, Map.of()));
      endpoints.add(Endpoints.open(NO_POLL, "verbs", new VerbsTransportProvider(), base,
          Map.of("sluice.transport.verbs.busyPoll", "0")));
      endpoints.add(Endpoints.open("tcp", "tcp", Transports.provider("tcp"), base, Map.of()));
      Endpoints verbs = endpoints.get(0);
      Endpoints tcp = endpoints.get(2);
      // Unmeasured warm-up, so that the JIT compiler's work (heavy under emulation) stays out of
      // the figures as far as it can: every cell once, with less data.
      for (Endpoints e : endpoints) {
        for (int size : SIZES) {
          e.throughput(size, scale.bytesPerRound() / 4);
        }
        for (int size : LATENCY_SIZES) {
          e.latency(size, scale.latencyReads() / 2);
        }
      }
      List<String> json = new ArrayList<>();
      List<String> ratios = new ArrayList<>();
      for (int size : SIZES) {
        String label = label(size);
        List<Endpoints> contenders = List.of(verbs, tcp);
        int[] crcs = verbs.sliceCrcs(size);
        double[][] rates = new double[3][rounds];
        double[] verified = new double[rounds];
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < contenders.size(); p++) {
            CpuAccount before = CpuAccount.sample();
            rates[p][round] = contenders.get(p).throughput(size, scale.bytesPerRound());
            out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read %s x%d round %d (%.1f MB/s): %s%n", contenders.get(p).name(),
                label, IN_FLIGHT, round + 1, rates[p][round], CpuAccount.sample().since(before));
          }
          // The same READs checked against their CRC32C on the reading thread, as a reader with
          // verifyReads on does; in every round, beside the unchecked ones.
          CpuAccount checkedFrom = CpuAccount.sample();
          verified[round] = verbs.throughput(size, scale.bytesPerRound(), crcs);
          out.printf(Locale.ROOT, "VERBS-BENCH cpu verbs verified read %s x%d round %d (%.1f MB/s): %s%n", label,
              IN_FLIGHT, round + 1, verified[round], CpuAccount.sample().since(checkedFrom));
          if (perftest != null) {
            CpuAccount before = CpuAccount.sample();
            rates[2][round] = perftest.readBandwidth(size, IN_FLIGHT, scale.bytesPerRound());
            out.printf(Locale.ROOT, "VERBS-BENCH cpu ib_read_bw read %s round %d (%.1f MB/s): %s%n", label, round + 1,
                rates[2][round], CpuAccount.sample().since(before).replaceFirst("; JVM threads.*", ""));
          }
        }
        String name = "read." + label + ".inflight" + IN_FLIGHT;
        double v = median(rates[0]);
        double t = median(rates[1]);
        double checked = median(verified);
        out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight, each checked against its CRC32C: verbs %8.1f MB/s"
            + "   unchecked %8.1f MB/s   checked/unchecked %.2f%n", label, IN_FLIGHT, checked, v, checked / v);
        json.add(names.record("verbs." + name + ".verified", "MB/s", checked, "verbs." + name, v));
        ratios.add(String.format(Locale.ROOT, "READ %s x%d verbs checked/unchecked %.2fx", label, IN_FLIGHT, checked / v));
        if (perftest == null) {
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s%n",
              label, IN_FLIGHT, v, t);
          json.add(names.record("verbs." + name, "MB/s", v, "tcp." + name, t));
        } else {
          double p = median(rates[2]);
          out.printf(Locale.ROOT, "VERBS-BENCH read %-6s x%d in flight: verbs %8.1f MB/s   tcp %8.1f MB/s"
              + "   ib_read_bw %8.1f MB/s   verbs/ib_read_bw %.2f%n", label, IN_FLIGHT, v, t, p, v / p);
          String baseline = "ib_read_bw." + label + ".inflight" + IN_FLIGHT;
          json.add(names.record("verbs." + name, "MB/s", v, baseline, p));
          json.add(names.record("tcp." + name, "MB/s", t, baseline, p));
          ratios.add(String.format(Locale.ROOT, "READ %s x%d verbs/ib_read_bw %.2fx", label, IN_FLIGHT, v / p));
        }
      }
      for (int size : LATENCY_SIZES) {
        String label = label(size);
        List<Endpoints> contenders = List.of(verbs, endpoints.get(1), tcp);
        double[][] p50 = new double[4][rounds];
        double[][] p99 = new double[4][rounds];
        // ib_read_lat may give no usable figure under emulation ("inf"): tcp is then this cell's baseline.
        boolean withPerftest = perftest != null;
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < contenders.size(); p++) {
            CpuAccount before = CpuAccount.sample();
            Latency l = contenders.get(p).latency(size, scale.latencyReads());
            p50[p][round] = l.p50();
            p99[p][round] = l.p99();
            out.printf(Locale.ROOT, "VERBS-BENCH cpu %s read %s one at a time round %d (p50 %.0f us, p99 %.0f us;"
                + " medians: post %.0f, until the completing thread %.0f, hand-off to the caller %.0f): %s%n",
                contenders.get(p).name(), label, round + 1, l.p50(), l.p99(), l.post(), l.completion(), l.handoff(),
                CpuAccount.sample().since(before));
          }
          if (withPerftest) {
            CpuAccount before = CpuAccount.sample();
            try {
              Perftest.Latency l = perftest.readLatency(size, scale.latencyReads());
              p50[3][round] = l.p50();
              p99[3][round] = l.p99();
              out.printf(Locale.ROOT, "VERBS-BENCH cpu ib_read_lat read %s round %d (typical %.0f us, 99%% %.0f us): %s%n",
                  label, round + 1, l.p50(), l.p99(), CpuAccount.sample().since(before).replaceFirst("; JVM threads.*", ""));
            } catch (IllegalStateException e) {
              out.printf(Locale.ROOT, "VERBS-BENCH %s; tcp is the baseline of READ %s one at a time%n", e.getMessage(), label);
              withPerftest = false;
            }
          }
        }
        int baselineRow = withPerftest ? 3 : 2;
        String baselineName = withPerftest ? "ib_read_lat." + label : "tcp.read." + label;
        for (String quantile : new String[] {"p50", "p99"}) {
          double[][] q = quantile.equals("p50") ? p50 : p99;
          double baseline = median(q[baselineRow]);
          String cell = ".read." + label + ".latency_" + quantile;
          out.printf(Locale.ROOT, "VERBS-BENCH read %s one at a time, %s: verbs %.0f us   verbs, busy poll off %.0f us"
              + "   tcp %.0f us%s%n", label, quantile, median(q[0]), median(q[1]), median(q[2]),
              !withPerftest ? "" : String.format(Locale.ROOT, "   ib_read_lat %.0f us   verbs/ib_read_lat %.2f",
                  baseline, median(q[0]) / baseline));
          json.add(names.record("verbs" + cell, "us", median(q[0]), baselineName + ".latency_" + quantile, baseline));
          json.add(names.record(NO_POLL + cell, "us", median(q[1]), baselineName + ".latency_" + quantile, baseline));
          if (withPerftest) {
            json.add(names.record("tcp" + cell, "us", median(q[2]), baselineName + ".latency_" + quantile, baseline));
            ratios.add(String.format(Locale.ROOT, "READ %s %s verbs/ib_read_lat %.2fx (busy poll off %.2fx)", label,
                quantile, median(q[0]) / baseline, median(q[1]) / baseline));
          }
        }
      }
      for (int size : REQUEST_SIZES) {
        String label = label(size);
        List<Endpoints> contenders = List.of(verbs, endpoints.get(1), tcp);
        double[][] p50 = new double[3][rounds];
        for (int round = 0; round < rounds; round++) {
          for (int p = 0; p < contenders.size(); p++) {
            p50[p][round] = contenders.get(p).requestMicros(size, scale.latencyReads() / 2);
          }
        }
        double v = median(p50[0]);
        double n = median(p50[1]);
        double t = median(p50[2]);
        out.printf(Locale.ROOT, "VERBS-BENCH request %s echoed, median round trip: verbs %.0f us   verbs, busy poll off"
            + " %.0f us   tcp %.0f us   verbs/tcp %.2f%n", label, v, n, t, v / t);
        String cell = ".request." + label + ".roundtrip_p50";
        json.add(names.record("verbs" + cell, "us", v, "tcp" + cell, t));
        json.add(names.record(NO_POLL + cell, "us", n, "tcp" + cell, t));
        ratios.add(String.format(Locale.ROOT, "request %s verbs/tcp %.2fx", label, v / t));
      }
      out.println("VERBS-BENCH ratios: " + String.join("; ", ratios));
      out.println("RESULTS [" + String.join(", ", json) + "]");
      return 0;
    } catch (BenchFailure | IllegalStateException e) {
      out.println("VERBS-BENCH failed: " + e.getMessage());
      return 1;
    } finally {
      endpoints.forEach(Endpoints::close);
    }
  }

  /** Names the records of one device: as they are, or under a prefix (see the class comment). */
  record Names(String prefix) {
    String of(String name) {
      if (prefix.isEmpty()) {
        return name;
      }
      return name.startsWith("verbs.") ? prefix + name.substring("verbs".length()) : prefix + "." + name;
    }

    /** One results record in the perf/results shape. */
    String record(String name, String unit, double value, String baselineName, double baseline) {
      return String.format(Locale.ROOT,
          "{\"name\": \"%s\", \"unit\": \"%s\", \"value\": %.6g, \"baseline_name\": \"%s\", \"baseline_value\": %.6g}",
          of(name), unit, value, of(baselineName), baseline);
    }
  }

  private static double median(double[] values) {
    return percentile(values, 0.5);
  }

  /** The value below which {@code fraction} of {@code values} lie (nearest rank). */
  private static double percentile(double[] values, double fraction) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(fraction * sorted.length) - 1)];
  }

  /** Microseconds of a READ, p50 and p99, and the medians of its parts (see {@link Endpoints#latency}). */
  private record Latency(double p50, double p99, double post, double completion, double handoff) {}

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

    static Endpoints open(String name, String providerName, TransportProvider provider, Map<String, String> base,
        Map<String, String> extra) throws TransportException {
      java.util.HashMap<String, String> keys = new java.util.HashMap<>(extra);
      keys.put(TransportOption.PROVIDER.key(), providerName);
      TransportConfig config = TransportConfig.of(base).with(keys);
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
      return throughput(size, bytes, null);
    }

    /**
     * As {@link #throughput(int, long)}; with {@code crcs} (the CRC32C of every {@code size}-byte
     * slice of the source, as {@link #sliceCrcs} gives them), each READ's bytes are checked
     * against their slice's CRC32C on this thread once it completes, as a reader that verifies
     * what it READ does before handing it on.
     */
    double throughput(int size, long bytes, int[] crcs) {
      RemoteDescriptor d = source.descriptor();
      int slots = SOURCE_BYTES / size;
      long reads = bytes / size;
      java.util.ArrayDeque<CompletableFuture<Void>> window = new java.util.ArrayDeque<>();
      java.util.ArrayDeque<long[]> placed = new java.util.ArrayDeque<>(); // {source slice, target slot}
      long started = System.nanoTime();
      for (long i = 0; i < reads; i++) {
        if (window.size() == IN_FLIGHT) {
          await(window.poll(), name + " READ");
          check(crcs, size, placed.poll());
        }
        int slot = (int) (i % IN_FLIGHT);
        long slice = i * 7 % slots;
        window.add(connection.readBatch(List.of(new ReadRequest(d, slice * size, target,
            (long) slot * size, size))).get(0));
        placed.add(new long[] {slice, slot});
      }
      while (!window.isEmpty()) {
        await(window.poll(), name + " READ");
        check(crcs, size, placed.poll());
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      return reads * size / 1e6 / seconds;
    }

    private void check(int[] crcs, int size, long[] placed) {
      if (crcs != null && Checksums.crc32c(target.buffer(), (int) placed[1] * size, size) != crcs[(int) placed[0]]) {
        throw new BenchFailure(name + ": the CRC32C of a READ differs from its source's", null);
      }
    }

    /** The CRC32C of every {@code size}-byte slice of the source. */
    int[] sliceCrcs(int size) {
      int[] crcs = new int[SOURCE_BYTES / size];
      for (int i = 0; i < crcs.length; i++) {
        crcs[i] = Checksums.crc32c(source.buffer(), i * size, size);
      }
      return crcs;
    }

    /**
     * {@code count} READs of {@code size} with nothing else in flight, in microseconds: p50 and
     * p99 of the whole READ, and the medians of its parts: the call that posts it, from then
     * until the thread that completes the future runs its callbacks, and from there until the
     * waiting caller runs.
     */
    Latency latency(int size, int count) {
      double[][] samples = new double[4][count];
      int slots = SOURCE_BYTES / size;
      for (int i = 0; i < count; i++) {
        AtomicLong completed = new AtomicLong();
        long t0 = System.nanoTime();
        CompletableFuture<Void> read = connection.read(source.descriptor(), (long) (i % slots) * size, target, 0, size);
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
      return new Latency(median(samples[0]), percentile(samples[0], 0.99), median(samples[1]), median(samples[2]),
          median(samples[3]));
    }

    /** Median microseconds of {@code count} requests of {@code size} bytes echoed back, nothing else in flight. */
    double requestMicros(int size, int count) {
      ByteBuffer request = ByteBuffer.allocate(size);
      double[] samples = new double[count];
      for (int i = 0; i < count; i++) {
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
