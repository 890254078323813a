package io.sluice.flight.table;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.Ticket;

/**
 * The tables a server publishes, by name. A table's Flight descriptor is the path {@code [name]};
 * its ticket is {@link #ticket(String)}, defined here and nowhere else.
 *
 * <p>Each table remembers who stored it: the application ({@link #publish}), which may replace any
 * table, or a client's put ({@link #storePut}), which may create a table or replace one an earlier
 * put stored, never one the application published. Thread safe: a put and a publish of one name
 * are ordered, so a put never replaces a table the application published in the meantime.
 */
public final class TableRegistry implements AutoCloseable {
  private static final String TICKET_PREFIX = "sluice-table:";

  /** A stored table and whether a client's put stored it. */
  private record Entry(FlightTable table, boolean byPut) {}

  private final Map<String, Entry> tables = new ConcurrentHashMap<>();

  /** Publishes {@code table} under {@code name}, taking the caller's reference; replaces (and releases) an older one. */
  public void publish(String name, FlightTable table) {
    checkName(name);
    Entry old = tables.put(name, new Entry(table, false));
    if (old != null) {
      old.table().release();
    }
  }

  /**
   * Stores what a put sent under {@code name}, taking the caller's reference either way; replaces
   * (and releases) a table an earlier put stored.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException ALREADY_EXISTS if the application
   *     published a table of that name (it stays as it was; {@code table} is released)
   */
  public void storePut(String name, FlightTable table) {
    checkName(name);
    FlightTable[] replaced = new FlightTable[1];
    boolean stored;
    try {
      stored = tables.compute(name, (n, old) -> {
        if (old != null && !old.byPut()) {
          return old;
        }
        replaced[0] = old == null ? null : old.table();
        return new Entry(table, true);
      }).table() == table;
    } catch (RuntimeException e) {
      table.release();
      throw e;
    }
    if (!stored) {
      table.release();
      throw refusedPut(name);
    }
    if (replaced[0] != null) {
      replaced[0].release();
    }
  }

  /**
   * Refuses early a put that {@link #storePut} would refuse, before its batches are received.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException ALREADY_EXISTS if the application published {@code name}
   */
  public void checkPutMayStore(String name) {
    Entry e = tables.get(name);
    if (e != null && !e.byPut()) {
      throw refusedPut(name);
    }
  }

  private static org.apache.arrow.flight.FlightRuntimeException refusedPut(String name) {
    return org.apache.arrow.flight.CallStatus.ALREADY_EXISTS.withDescription("table '" + name
        + "' was published by the server's application; a put may not replace it (puts may create tables"
        + " and replace tables that puts stored)").toRuntimeException();
  }

  /** Removes the table; streams that are reading it finish. @return whether one was there */
  public boolean remove(String name) {
    Entry old = tables.remove(name);
    if (old != null) {
      old.table().release();
      return true;
    }
    return false;
  }

  /** The table, retained (the caller releases it), if published. */
  public Optional<FlightTable> acquire(String name) {
    while (true) {
      Entry e = tables.get(name);
      if (e == null) {
        return Optional.empty();
      }
      if (e.table().tryRetain()) {
        return Optional.of(e.table());
      }
      // replaced and freed between the lookup and the retain: look again
    }
  }

  /**
   * The table, retained (the caller releases it).
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException NOT_FOUND if it is not published
   */
  public FlightTable require(String name) {
    return acquire(name).orElseThrow(() -> org.apache.arrow.flight.CallStatus.NOT_FOUND
        .withDescription("no table '" + name + "'").toRuntimeException());
  }

  public List<String> names() {
    return tables.keySet().stream().sorted().toList();
  }

  public static Ticket ticket(String name) {
    return new Ticket((TICKET_PREFIX + name).getBytes(StandardCharsets.UTF_8));
  }

  public static FlightDescriptor descriptor(String name) {
    return FlightDescriptor.path(name);
  }

  /** The table name a ticket of ours carries. */
  public static Optional<String> nameOf(Ticket ticket) {
    String s = new String(ticket.getBytes(), StandardCharsets.UTF_8);
    return s.startsWith(TICKET_PREFIX) ? Optional.of(s.substring(TICKET_PREFIX.length())) : Optional.empty();
  }

  /** The table name a path descriptor names. */
  public static Optional<String> nameOf(FlightDescriptor descriptor) {
    if (descriptor.isCommand() || descriptor.getPath().size() != 1) {
      return Optional.empty();
    }
    return Optional.of(descriptor.getPath().get(0));
  }

  private static void checkName(String name) {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a table needs a non-empty name");
    }
  }

  @Override
  public void close() {
    for (String name : names()) {
      remove(name);
    }
  }
}
