package io.sluice.perf.flight;

import io.sluice.flight.SluiceFlightServer;
import io.sluice.perf.bench.Cli;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The serving JVM of the Flight benchmark, started by {@link FlightServerProcess}. It builds the
 * {@link BenchTable}, starts one {@link SluiceFlightServer} per data-plane provider on loopback
 * (each publishes the table; plain Flight puts go to them too) and a stock flight-core server
 * ({@link StockTableProducer}) serving the same table to the gRPC baseline, and per provider a
 * {@link CeilingSource} with the measured table's bodies for the transport ceiling; announces them ({@link
 * ServerAnnouncement}), drops the tables puts stored when told to, and serves until its standard
 * input closes, so it never outlives the driver.
 *
 * <p>Arguments: {@code TABLE_BYTES WARMUP_BYTES BATCH_ROWS PROVIDER...} (no warm-up table when
 * {@code WARMUP_BYTES} is 0); the secret comes from {@value
 * LoopbackFlight#SECRET_ENV}.
 */
public final class FlightBenchServer {
  private FlightBenchServer() {}

  public static void main(String[] args) {
    Cli.run("Flight benchmark server", () -> {
      run(args);
      return 0;
    });
  }

  private static void run(String[] args) throws IOException {
    if (args.length < 4) {
      throw new IllegalArgumentException("usage: FlightBenchServer TABLE_BYTES WARMUP_BYTES BATCH_ROWS PROVIDER...");
    }
    long tableBytes = Long.parseLong(args[0]);
    long warmupBytes = Long.parseLong(args[1]);
    int batchRows = Integer.parseInt(args[2]);
    List<String> providers = List.of(args).subList(3, args.length);
    String secret = System.getenv(LoopbackFlight.SECRET_ENV);
    if (secret == null || secret.isEmpty()) {
      throw new IllegalArgumentException("environment variable " + LoopbackFlight.SECRET_ENV + " is not set");
    }
    List<SluiceFlightServer> servers = new ArrayList<>();
    Map<String, BenchTable.Built> tables = new LinkedHashMap<>();
    Map<String, CeilingSource> ceilings = new LinkedHashMap<>();
    try (BufferAllocator allocator = new RootAllocator();
         Closer builtTables = () -> tables.values().forEach(BenchTable.Built::close);
         StockTableProducer stock = new StockTableProducer(allocator, tables);
         FlightServer stockServer = FlightServer.builder(allocator, Location.forGrpcInsecure(LoopbackFlight.HOST, 0),
             stock).build()) {
      try {
        tables.put(ServerAnnouncement.TABLE, BenchTable.build(allocator, tableBytes, batchRows));
        if (warmupBytes > 0) {
          tables.put(ServerAnnouncement.WARMUP_TABLE, BenchTable.build(allocator, warmupBytes, batchRows));
        }
        stockServer.start();
        Map<String, Location> locations = new LinkedHashMap<>();
        locations.put(ServerAnnouncement.STOCK, Location.forGrpcInsecure(LoopbackFlight.HOST, stockServer.getPort()));
        for (String provider : providers) {
          SluiceFlightServer server = SluiceFlightServer.builder(allocator,
              Location.forGrpcInsecure(LoopbackFlight.HOST, 0)).config(LoopbackFlight.serverConfig(provider, secret))
              .start();
          servers.add(server);
          if (!server.dataPlane().equals(Optional.of(provider))) {
            throw new IllegalStateException("the Flight server for " + provider + " has data plane "
                + server.dataPlane().orElse("off") + "; is the provider available here?");
          }
          for (var t : tables.entrySet()) {
            server.publish(t.getKey(), t.getValue().table().retain());
          }
          locations.put(provider, server.location());
          ceilings.put(provider, CeilingSource.open(provider, secret, tables.get(ServerAnnouncement.TABLE).table()));
        }
        Map<String, ServerAnnouncement.ServedTable> served = new LinkedHashMap<>();
        tables.forEach((name, t) -> served.put(name,
            new ServerAnnouncement.ServedTable(t.table().bodyBytes(), t.fingerprint())));
        Map<String, ServerAnnouncement.Ceiling> offers = new LinkedHashMap<>();
        ceilings.forEach((provider, c) -> offers.put(provider, c.offer()));
        ServerAnnouncement a = new ServerAnnouncement(locations, served, offers);
        a.lines().forEach(System.out::println);
        System.out.flush();
        serveCommands(servers);
      } finally {
        ceilings.values().forEach(CeilingSource::close);
        servers.forEach(SluiceFlightServer::close);
        stockServer.shutdown();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while stopping the stock Flight server");
    }
  }

  /** Closes what it holds; {@link #close()} throws nothing checked. */
  @FunctionalInterface
  private interface Closer extends AutoCloseable {
    @Override
    void close();
  }

  /** Runs the driver's commands until its end of input, the signal to stop. */
  private static void serveCommands(List<SluiceFlightServer> servers) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      Optional<String> drop = ServerAnnouncement.tableToDrop(line);
      if (drop.isEmpty()) {
        throw new IllegalArgumentException("unknown command from the driver: '" + line + "'");
      }
      if (drop.get().equals(ServerAnnouncement.TABLE) || drop.get().equals(ServerAnnouncement.WARMUP_TABLE)) {
        throw new IllegalArgumentException("the served tables are not dropped");
      }
      servers.forEach(s -> s.remove(drop.get()));
      System.out.println(ServerAnnouncement.droppedLine(drop.get()));
      System.out.flush();
    }
  }
}
