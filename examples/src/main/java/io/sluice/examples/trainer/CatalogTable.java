package io.sluice.examples.trainer;

import io.sluice.flight.CallToken;
import io.sluice.flight.loader.Shard;
import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A published table as a reader finds it: the driver's catalog (a Flight location) and the
 * table's name, which is all the pipeline's driver tells a trainer ({@code driver.properties}).
 * {@link #list} asks the catalog (GetFlightInfo of the path [name]) for one endpoint per shard, in
 * the table's order: the executor that serves it, the ticket, and the call token for that
 * executor (the endpoint's app metadata). Immutable.
 *
 * @param catalog the catalog's Flight location ({@code grpc+tcp://driver:port})
 * @param name the table's name
 * @param rows the rows the driver published (what a whole epoch must read)
 */
public record CatalogTable(String catalog, String name, long rows) {
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(60);

  /** The catalog's answer: the shards, each executor's call token by location, the table's schema. */
  public record Listing(List<Shard> shards, Map<String, String> tokens, Schema schema) {
    /** How many float64 features the table has (user_id, label, f0.., embedding). */
    public int features() {
      return schema.getFields().size() - 3;
    }

    /** The call option that presents {@code location}'s token (what a plain Flight client sends). */
    public CallOption auth(String location) {
      String token = tokens.get(location);
      if (token == null) {
        throw new IllegalStateException("the catalog handed out no token for " + location);
      }
      return CallToken.callOption(token);
    }
  }

  /** The table a run of the pipeline published, from {@code runDir/driver.properties}. */
  public static CatalogTable read(Path runDir) throws IOException {
    Properties p = driverProperties(runDir);
    if (p.getProperty("catalog") == null) {
      throw new IllegalStateException(runDir + "/driver.properties names no catalog: the run wrote Parquet");
    }
    return new CatalogTable(p.getProperty("catalog"), p.getProperty("table"), Long.parseLong(p.getProperty("rows")));
  }

  /** What the driver wrote to {@code runDir/driver.properties}. */
  public static Properties driverProperties(Path runDir) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(runDir.resolve("driver.properties"), StandardCharsets.ISO_8859_1)) {
      p.load(r);
    }
    return p;
  }

  /** A call token for the catalog minted from the tables' secret, valid for a few minutes. */
  public CallOption tokenFrom(String secret) {
    return CallToken.callOption(CallToken.mint(secret, CallToken.audienceOf(location()), Duration.ofMinutes(5)));
  }

  /** The catalog's shards of the table, presenting {@code auth} (a catalog token). */
  public Listing list(BufferAllocator allocator, CallOption auth) throws InterruptedException {
    FlightInfo info;
    try (FlightClient client = FlightClient.builder(allocator, location()).build()) {
      info = client.getInfo(FlightDescriptor.path(name), auth,
          CallOptions.timeout(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    }
    List<Shard> shards = new ArrayList<>();
    Map<String, String> tokens = new LinkedHashMap<>();
    List<FlightEndpoint> endpoints = info.getEndpoints();
    for (int i = 0; i < endpoints.size(); i++) {
      FlightEndpoint e = endpoints.get(i);
      Location at = e.getLocations().get(0);
      // Names that sort in the catalog's order: the loader orders shards by name.
      shards.add(new Shard(String.format("%s/%06d", name, i), at, e.getTicket(), -1, -1));
      Optional.ofNullable(e.getAppMetadata()).filter(m -> m.length > 0)
          .ifPresent(m -> tokens.put(at.getUri().toString(), new String(m, StandardCharsets.UTF_8)));
    }
    if (shards.isEmpty()) {
      throw new IllegalStateException("table '" + name + "' at " + catalog + " has no shards");
    }
    return new Listing(List.copyOf(shards), Map.copyOf(tokens), info.getSchema());
  }

  private Location location() {
    return new Location(URI.create(catalog));
  }
}
