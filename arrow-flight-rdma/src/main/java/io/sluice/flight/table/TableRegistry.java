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
 * its ticket is {@link #ticket(String)}, defined here and nowhere else. Thread safe.
 */
public final class TableRegistry implements AutoCloseable {
  private static final String TICKET_PREFIX = "sluice-table:";

  private final Map<String, FlightTable> tables = new ConcurrentHashMap<>();

  /** Publishes {@code table} under {@code name}, taking the caller's reference; replaces (and releases) an older one. */
  public void publish(String name, FlightTable table) {
    checkName(name);
    FlightTable old = tables.put(name, table);
    if (old != null) {
      old.release();
    }
  }

  /** Removes the table; streams that are reading it finish. @return whether one was there */
  public boolean remove(String name) {
    FlightTable old = tables.remove(name);
    if (old != null) {
      old.release();
      return true;
    }
    return false;
  }

  /** The table, retained (the caller releases it), if published. */
  public Optional<FlightTable> acquire(String name) {
    while (true) {
      FlightTable t = tables.get(name);
      if (t == null) {
        return Optional.empty();
      }
      if (t.tryRetain()) {
        return Optional.of(t);
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
