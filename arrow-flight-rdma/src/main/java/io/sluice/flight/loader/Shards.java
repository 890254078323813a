package io.sluice.flight.loader;

import io.sluice.flight.client.FlightClients;
import io.sluice.transport.TransportConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Finds a table's shards on Flight servers: every flight whose descriptor is a one-element path
 * starting with a prefix, with the ticket of its first endpoint, read at the location that was
 * asked (so a server that announces a wildcard address is still reached where it was found).
 * Works against any Flight server; uses flight-core's plain {@code FlightClient}. Stateless.
 */
public final class Shards {
  private Shards() {}

  /**
   * The shards named {@code prefix...} on {@code locations}, ordered by name and then location:
   * the order every reader of the table agrees on.
   *
   * @throws IllegalStateException if no server lists such a shard
   */
  public static List<Shard> list(BufferAllocator allocator, List<Location> locations, String prefix,
      Duration timeout) throws InterruptedException {
    return list(allocator, locations, prefix, timeout, TransportConfig.of(Map.of()));
  }

  /**
   * As {@link #list(BufferAllocator, List, String, Duration)}, asking with the call token of the
   * secret {@code config} holds (servers with a secret answer no other call) and its TLS trust.
   */
  public static List<Shard> list(BufferAllocator allocator, List<Location> locations, String prefix,
      Duration timeout, TransportConfig config) throws InterruptedException {
    List<Shard> found = new ArrayList<>();
    for (Location location : locations) {
      try (FlightClient client = FlightClients.open(allocator, location, config)) {
        for (FlightInfo info : client.listFlights(Criteria.ALL, CallOptions.timeout(timeout.toMillis(),
            java.util.concurrent.TimeUnit.MILLISECONDS))) {
          var d = info.getDescriptor();
          if (d.isCommand() || d.getPath().size() != 1 || !d.getPath().get(0).startsWith(prefix)
              || info.getEndpoints().isEmpty()) {
            continue;
          }
          found.add(new Shard(d.getPath().get(0), location, info.getEndpoints().get(0).getTicket(),
              info.getRecords(), info.getBytes()));
        }
      }
    }
    if (found.isEmpty()) {
      throw new IllegalStateException("no flight named '" + prefix + "...' on " + locations);
    }
    found.sort(Comparator.comparing(Shard::name).thenComparing(s -> s.location().getUri().toString()));
    return List.copyOf(found);
  }
}
