package io.sluice.flight.loader;

import java.util.Objects;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;

/**
 * One unit a {@link FlightLoader} hands out: a Flight endpoint (where, and the ticket that opens
 * it) holding some record batches of a table. Shards are what is shuffled and sharded over
 * trainer workers; a shard is always read whole, so a cursor never points inside one. Immutable.
 *
 * @param name the shard's name, unique within its table (the loader orders shards by it)
 * @param location the Flight server that serves it
 * @param ticket the ticket that opens it (DoGet)
 * @param rows its row count as the server announced it, or -1 if unknown
 * @param bytes its body bytes as the server announced them, or -1 if unknown
 */
public record Shard(String name, Location location, Ticket ticket, long rows, long bytes) {
  public Shard {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(location, "location");
    Objects.requireNonNull(ticket, "ticket");
  }

  @Override
  public String toString() {
    return name + "@" + location.getUri();
  }
}
