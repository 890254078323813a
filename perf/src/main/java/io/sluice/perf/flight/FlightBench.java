package io.sluice.perf.flight;

import io.sluice.flight.CallToken;
import io.sluice.flight.SluiceFlightClient;
import io.sluice.flight.SluiceFlightServer;
import io.sluice.flight.table.FlightTable;
import io.sluice.perf.bench.Cli;
import io.sluice.perf.bench.Loopback;
import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.Median;
import io.sluice.perf.bench.ResultTable;
import io.sluice.perf.bench.ResultsFile;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The Flight benchmark (run by {@code perf/bin/flight-bench}). A second JVM ({@link
 * FlightBenchServer}) holds one table and serves it on loopback; this JVM moves the whole table
 * along each path, in interleaved rounds so machine noise hits all alike: DoGet with flight-core's
 * plain {@code FlightClient} from a stock flight-core server of the same table (gRPC, the
 * baseline), and with {@link SluiceFlightClient} from {@link SluiceFlightServer}s over the tcp
 * and shm data planes, each also with a client that does not check the bodies it reads against
 * their CRC32C ({@code sluice.flight.verifyReads=false}, the {@value #NO_VERIFY} paths, run next to
 * the checked one); 2 and 4 parallel streams of the whole table over tcp (with {@link
 * io.sluice.flight.ParallelReader}) and 4 over gRPC; the ceilings ({@link Ceilings}: the
 * transport's own READ of the same bodies over tcp and shm, a memcpy, a loopback socket stream);
 * then DoPut to the SluiceFlightServers with the plain client (gRPC, the baseline) and with
 * SluiceFlightClient over tcp and shm. Every get and ceiling runs the same {@link BodySum} over
 * every byte inside its timed part, and the sums are checked after (a get against the driver's
 * own copy of the table, a ceiling against the server's bodies); a put is checked by the rows
 * the server stored. Throughput is bytes moved over the time of the median round. The cells run in
 * one order, then in the reverse order the next round, so no path always goes first. It writes a
 * {@link ResultsFile} and prints a {@link ResultTable} with every round.
 *
 * <p>Not thread safe; one run at a time per JVM.
 */
public final class FlightBench {
  static final String GBPS = "GB/s";
  static final String GRPC = "grpc";
  static final List<String> PROVIDERS = List.of("tcp", "shm");

  private FlightBench() {}

  public static void main(String[] args) {
    Cli.main("Flight benchmark", args, FlightBenchOptions::parse, o -> {
      run(o, System.out);
      return 0;
    });
  }

  static String name(String operation, String path) {
    return "flight." + operation + "." + path;
  }

  /** Parallel streams measured beside the single stream (each reads the whole table). */
  static final List<Integer> STREAMS = List.of(2, 4);
  static final String CEILING = "ceiling";
  /** The get of a client that does not check bodies against their CRC32C; the checked get is the default. */
  static final String NO_VERIFY = "noverify";
  static final String VERIFIED = "verified";

  /** A checked move: how long it took and how many bytes it moved. */
  record MovedBytes(FlightPaths.Timed timed, long bytes) {}

  /** One checked move of the whole table of {@code w} (some cells move another, fixed set of bytes). */
  @FunctionalInterface
  private interface Cell {
    MovedBytes run(Workload w) throws IOException;
  }

  /**
   * A table both JVMs hold: its name on the servers, the driver's copy (what puts send), what a
   * reader of all of it sees, what {@link BodySum} makes of it, and its body bytes (what every
   * path moves).
   */
  private record Workload(String name, FlightTable local, Fingerprint.Value expected, BodySum.Value sum,
      long bodyBytes) {
    Ticket ticket() {
      return SluiceFlightServer.ticket(name);
    }
  }

  /** Runs the benchmark, writes {@link FlightBenchOptions#out()}, prints progress and the table; returns the results. */
  public static List<Measurement> run(FlightBenchOptions o, PrintStream out) throws IOException {
    for (String p : PROVIDERS) {
      Loopback.requireAvailable(p, p, "");
    }
    String secret = Loopback.newSecret();
    Map<String, double[]> rounds = new LinkedHashMap<>();
    Map<String, BenchTable.Built> local = new LinkedHashMap<>();
    try (BufferAllocator allocator = new RootAllocator();
         FlightServerProcess server = FlightServerProcess.start(o, PROVIDERS, secret);
         LocalTables closer = () -> local.values().forEach(BenchTable.Built::close)) {
      local.put(ServerAnnouncement.TABLE, BenchTable.build(allocator, o.tableBytes(), o.batchRows()));
      if (o.warmupBytes() > 0) {
        local.put(ServerAnnouncement.WARMUP_TABLE, BenchTable.build(allocator, o.warmupBytes(), o.batchRows()));
      }
      ServerAnnouncement a = server.awaitReady();
      Map<String, Workload> workloads = new LinkedHashMap<>();
      for (Map.Entry<String, BenchTable.Built> t : local.entrySet()) {
        ServerAnnouncement.ServedTable served = a.table(t.getKey());
        if (!served.fingerprint().equals(t.getValue().fingerprint())) {
          throw new IllegalStateException("the server built a different table " + t.getKey() + ": "
              + served.fingerprint() + ", here " + t.getValue().fingerprint());
        }
        workloads.put(t.getKey(), new Workload(t.getKey(), t.getValue().table(), served.fingerprint(),
            t.getValue().sum(), served.bodyBytes()));
      }
      Workload measured = workloads.get(ServerAnnouncement.TABLE);
      out.printf(Locale.ROOT, "Sluice Flight benchmark%s: two JVMs on loopback, %d cores, Java %s%n",
          o.quick() ? " (--quick: smoke run, figures are meaningless)" : "",
          Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
      out.printf(Locale.ROOT, "table: %d rows in %d batches of %d, %.1f MiB of batch bodies (id, price, quantity,"
          + " event_time, name, category); %d measured round(s)%s%n", measured.expected().rows(),
          measured.expected().batches(), o.batchRows(), measured.bodyBytes() / (double) FlightBenchOptions.MIB,
          o.rounds(), o.warmup() ? String.format(Locale.ROOT, " after a warm-up round with %.1f MiB",
              workloads.get(ServerAnnouncement.WARMUP_TABLE).bodyBytes() / (double) FlightBenchOptions.MIB) : "");
      out.flush();
      try (FlightClient stock = FlightClient.builder(allocator, a.server(ServerAnnouncement.STOCK)).build();
           FlightClient plain = FlightClient.builder(allocator, a.server("tcp"))
               .intercept(CallToken.clientMiddleware(CallToken.mint(secret,
                   CallToken.audienceOf(a.server("tcp")), java.time.Duration.ofHours(1)))).build();
           SluiceFlightClient tcp = dataPlaneClient(allocator, a, "tcp", secret, true);
           SluiceFlightClient shm = dataPlaneClient(allocator, a, "shm", secret, true);
           SluiceFlightClient tcpUnchecked = dataPlaneClient(allocator, a, "tcp", secret, false);
           SluiceFlightClient shmUnchecked = dataPlaneClient(allocator, a, "shm", secret, false);
           CeilingReaders ceilings = CeilingReaders.open(a, PROVIDERS, secret)) {
        Map<String, SluiceFlightClient> clients = Map.of("tcp", tcp, "shm", shm);
        Map<String, SluiceFlightClient> unchecked = Map.of("tcp", tcpUnchecked, "shm", shmUnchecked);
        Map<String, Cell> cells = new LinkedHashMap<>();
        if (o.operations().contains("get")) {
          cells.put(name("get", GRPC), w -> checkGet(FlightPaths.plainGet(stock, w.ticket(), 1), GRPC, w, 1));
          for (String p : PROVIDERS) {
            cells.put(name("get", p), w -> checkGet(FlightPaths.sluiceGet(clients.get(p), w.ticket(), 1), p, w, 1));
            cells.put(noVerify(p), w -> checkGet(FlightPaths.sluiceGet(unchecked.get(p), w.ticket(), 1), p, w, 1));
          }
          int most = STREAMS.get(STREAMS.size() - 1);
          cells.put(streams(GRPC, most), w -> checkGet(FlightPaths.plainGet(stock, w.ticket(), most), GRPC, w, most));
          for (int n : STREAMS) {
            cells.put(streams("tcp", n), w -> checkGet(FlightPaths.sluiceGet(tcp, w.ticket(), n), "tcp", w, n));
          }
          FlightTable measuredTable = measured.local();
          for (String p : PROVIDERS) {
            cells.put(ceiling("read." + p), w -> ceilings.read(p, measured.bodyBytes()));
          }
          // The memcpy and socket ceilings must see the same sum every time.
          Map<String, BodySum.Value> copySums = new java.util.HashMap<>();
          cells.put(ceiling("memcpy"), w -> checkCopy(Ceilings.memcpy(measuredTable.batches()), measured, copySums));
          cells.put(ceiling("socket"), w -> checkCopy(Ceilings.socketStream(measuredTable.batches()), measured,
              copySums));
        }
        if (o.operations().contains("put")) {
          String grpcPut = "put-" + GRPC;
          cells.put(name("put", GRPC), w -> checkPut(FlightPaths.plainPut(plain, allocator, w.local(), grpcPut),
              GRPC, grpcPut, plain, server, w));
          for (String p : PROVIDERS) {
            String stored = "put-" + p;
            cells.put(name("put", p), w -> checkPut(FlightPaths.sluicePut(clients.get(p), allocator, w.local(),
                stored), p, stored, clients.get(p).flight(), server, w));
          }
        }
        runRounds(o, out, cells, workloads, rounds);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while closing a Flight client");
      }
    }
    List<Measurement> results = new ArrayList<>();
    List<Measurement> printedOnly = new ArrayList<>();
    for (String op : o.operations()) {
      for (String p : PROVIDERS) {
        results.add(measurement(rounds, name(op, p), name(op, GRPC)));
      }
    }
    if (o.operations().contains("get")) {
      for (String p : PROVIDERS) {
        rounds.put(name("get", p) + "." + CEILING, rounds.get(name("get", p)));
        results.add(measurement(rounds, name("get", p) + "." + CEILING, ceiling("read." + p)));
      }
      int most = STREAMS.get(STREAMS.size() - 1);
      results.add(measurement(rounds, streams("tcp", most), streams(GRPC, most)));
      for (String p : PROVIDERS) {
        rounds.put(verified(p), rounds.get(name("get", p)));
        results.add(measurement(rounds, verified(p), noVerify(p)));
      }
      for (int n : STREAMS) {
        printedOnly.add(measurement(rounds, streams("tcp", n), name("get", "tcp")));
      }
      printedOnly.add(measurement(rounds, name("get", "shm"), ceiling("memcpy")));
      printedOnly.add(measurement(rounds, name("get", "tcp"), ceiling("socket")));
      printedOnly.add(measurement(rounds, ceiling("read.tcp"), ceiling("socket")));
      printedOnly.add(measurement(rounds, ceiling("read.shm"), ceiling("memcpy")));
      if (o.operations().contains("put")) {
        for (String p : PROVIDERS) {
          printedOnly.add(measurement(rounds, name("put", p), ceiling("read." + p)));
        }
      }
    }
    ResultsFile.write(o.out(), results);
    out.println();
    ResultTable.print(out, results, rounds);
    if (!printedOnly.isEmpty()) {
      out.println();
      out.println("also measured (not written to the results file):");
      ResultTable.print(out, printedOnly, rounds);
    }
    out.println("results written to " + o.out().toAbsolutePath());
    return results;
  }

  private static Measurement measurement(Map<String, double[]> rounds, String name, String baseline) {
    return new Measurement(name, GBPS, Median.of(rounds.get(name)), baseline, Median.of(rounds.get(baseline)));
  }

  static String streams(String path, int n) {
    return name("get", path) + ".streams" + n;
  }

  /** The checked get over {@code provider}, judged against the unchecked one. */
  static String verified(String provider) {
    return name("get", provider) + "." + VERIFIED;
  }

  static String noVerify(String provider) {
    return name("get", provider) + "." + NO_VERIFY;
  }

  static String ceiling(String what) {
    return "flight." + CEILING + "." + what;
  }

  /** Frees the driver's tables; {@link #close()} throws nothing checked. */
  @FunctionalInterface
  private interface LocalTables extends AutoCloseable {
    @Override
    void close();
  }

  private static SluiceFlightClient dataPlaneClient(BufferAllocator allocator, ServerAnnouncement a, String provider,
      String secret, boolean verifyReads) throws IOException {
    SluiceFlightClient c = SluiceFlightClient.connect(allocator, a.server(provider),
        LoopbackFlight.clientConfig(provider, secret, verifyReads));
    if (!c.dataPlane().equals(provider)) {
      String why = c.fallbackReason().orElse("no reason given");
      c.close();
      throw new IOException("the " + provider + " client negotiated no " + provider + " data plane: " + why);
    }
    return c;
  }

  private static void runRounds(FlightBenchOptions o, PrintStream out, Map<String, Cell> cells,
      Map<String, Workload> workloads, Map<String, double[]> rounds) throws IOException {
    cells.keySet().forEach(n -> rounds.put(n, new double[o.rounds()]));
    int first = o.warmup() ? -1 : 0;
    List<Map.Entry<String, Cell>> forward = List.copyOf(cells.entrySet());
    List<Map.Entry<String, Cell>> backward = new ArrayList<>(forward);
    Collections.reverse(backward);
    for (int r = first; r < o.rounds(); r++) {
      String label = r < 0 ? "warm-up" : "round " + (r + 1) + "/" + o.rounds();
      Workload w = workloads.get(r < 0 ? ServerAnnouncement.WARMUP_TABLE : ServerAnnouncement.TABLE);
      for (Map.Entry<String, Cell> c : r % 2 == 1 ? backward : forward) {
        MovedBytes m = c.getValue().run(w);
        FlightPaths.Timed t = m.timed();
        double gbps = t.gigabytesPerSecond(m.bytes());
        if (r >= 0) {
          rounds.get(c.getKey())[r] = gbps;
        }
        out.printf(Locale.ROOT, "  %-11s %-26s %8.3f %s  %7.2f s  checked%n", label, c.getKey(), gbps, GBPS,
            t.nanos() / 1e9);
        out.flush();
      }
    }
  }

  private static MovedBytes checkGet(FlightPaths.Timed t, String path, Workload w, int streams) {
    checkPath(t, path);
    if (t.seen().size() != streams) {
      throw new IllegalStateException(streams + " streams over " + path + " gave " + t.seen().size() + " sums");
    }
    for (BodySum.Value seen : t.seen()) {
      if (!seen.equals(w.sum())) {
        throw new IllegalStateException("a get over " + path + " summed " + seen + ", the table is " + w.sum());
      }
    }
    return new MovedBytes(t, streams * w.bodyBytes());
  }

  /** A memcpy or socket ceiling saw the measured table's bodies: its batch count, and the same sum every time. */
  private static MovedBytes checkCopy(FlightPaths.Timed t, Workload w, Map<String, BodySum.Value> sums) {
    BodySum.Value seen = t.seen().get(0);
    if (seen.batches() != w.expected().batches()) {
      throw new IllegalStateException("the " + t.dataPath() + " ceiling saw " + seen.batches() + " bodies, the table has "
          + w.expected().batches());
    }
    BodySum.Value first = sums.computeIfAbsent(w.name(), k -> seen);
    if (!first.equals(seen)) {
      throw new IllegalStateException("the " + t.dataPath() + " ceiling summed " + seen + ", earlier " + first);
    }
    return new MovedBytes(t, w.bodyBytes());
  }

  /**
   * Checks what a put stored by the row count the server reports for it, then frees it on the
   * server. Reading a stored put back is not possible yet: the data plane fails on tables a put
   * stored, and the server's plain DoGet stalls on large batches.
   */
  private static MovedBytes checkPut(FlightPaths.Timed t, String path, String stored, FlightClient info,
      FlightServerProcess server, Workload w) throws IOException {
    checkPath(t, path);
    FlightInfo i = info.getInfo(FlightDescriptor.path(stored));
    // The server fills FlightInfo's record count into its byte count and the other way round.
    long rows = w.expected().rows();
    if (i.getRecords() != rows && i.getBytes() != rows) {
      throw new IllegalStateException("a put over " + path + " stored " + i.getRecords() + " records ("
          + i.getBytes() + " bytes); the table has " + rows + " rows");
    }
    server.drop(stored);
    return new MovedBytes(t, w.bodyBytes());
  }

  private static void checkPath(FlightPaths.Timed t, String path) {
    if (!t.dataPath().equals(path)) {
      throw new IllegalStateException("a stream meant for " + path + " went over " + t.dataPath());
    }
  }
}
