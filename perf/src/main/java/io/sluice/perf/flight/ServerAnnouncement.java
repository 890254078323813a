package io.sluice.perf.flight;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.Location;

/**
 * What the Flight benchmark server offers, and the one definition of the lines it exchanges with
 * the driver. On standard output, once started:
 *
 * <pre>
 *   flight grpc URI                              the stock flight-core server of the gRPC baseline
 *   flight PROVIDER URI                          a SluiceFlightServer whose data plane is PROVIDER
 *   table BODY_BYTES ROWS BATCHES IDHASH NAMEBYTES  the served table, with its {@link Fingerprint}
 *   ready                                        nothing more until a command
 * </pre>
 *
 * Then, for each command line {@code drop NAME} on its standard input (free a table a put
 * stored), the line {@code dropped NAME}. Other output lines (a JVM warning, say) are ignored.
 * Immutable once built.
 *
 * @param servers Flight location per path: {@value #STOCK} for the stock server, else the data-plane provider
 * @param bodyBytes body bytes of the served table
 * @param fingerprint what a reader of the whole served table sees
 */
record ServerAnnouncement(Map<String, Location> servers, long bodyBytes, Fingerprint.Value fingerprint) {
  static final String READY = "ready";
  static final String TABLE = "bench";
  static final String STOCK = "grpc";

  ServerAnnouncement {
    servers = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(servers));
  }

  List<String> lines() {
    List<String> lines = new java.util.ArrayList<>();
    servers.forEach((path, location) -> lines.add("flight " + path + " " + location.getUri()));
    lines.add("table " + bodyBytes + " " + fingerprint.encode());
    lines.add(READY);
    return lines;
  }

  Location server(String provider) throws IOException {
    Location l = servers.get(provider);
    if (l == null) {
      throw new IOException("benchmark server announced no Flight server for " + provider);
    }
    return l;
  }

  static String dropCommand(String table) {
    return "drop " + table;
  }

  static Optional<String> droppedTable(String line) {
    return line.startsWith("dropped ") ? Optional.of(line.substring("dropped ".length()).trim()) : Optional.empty();
  }

  static Optional<String> tableToDrop(String command) {
    return command.startsWith("drop ") ? Optional.of(command.substring("drop ".length()).trim()) : Optional.empty();
  }

  static String droppedLine(String table) {
    return "dropped " + table;
  }

  /** Collects announcement lines until {@link #READY}. Not thread safe. */
  static final class Parser {
    private final Map<String, Location> servers = new LinkedHashMap<>();
    private long bodyBytes = -1;
    private Fingerprint.Value fingerprint;

    /**
     * Takes one line; returns the announcement once the ready line arrives.
     *
     * @throws IOException for a malformed announcement, or ready before the table line
     */
    Optional<ServerAnnouncement> accept(String line) throws IOException {
      String[] f = line.trim().split(" ");
      try {
        switch (f[0]) {
          case "flight" -> {
            expectFields(f, 3, line);
            servers.put(f[1], new Location(f[2]));
          }
          case "table" -> {
            expectFields(f, 6, line);
            bodyBytes = Long.parseLong(f[1]);
            fingerprint = Fingerprint.Value.decode(f, 2);
          }
          case READY -> {
            if (fingerprint == null) {
              throw new IOException("benchmark server was ready without announcing its table");
            }
            return Optional.of(new ServerAnnouncement(servers, bodyBytes, fingerprint));
          }
          default -> {
            // not an announcement
          }
        }
      } catch (IllegalArgumentException | java.net.URISyntaxException e) {
        throw new IOException("malformed announcement '" + line + "': " + e.getMessage(), e);
      }
      return Optional.empty();
    }

    private static void expectFields(String[] f, int n, String line) throws IOException {
      if (f.length != n) {
        throw new IOException("announcement '" + line + "' needs " + n + " fields, has " + f.length);
      }
    }
  }
}
