package io.sluice.perf.flight;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.apache.arrow.flight.Location;

/**
 * What the Flight benchmark server offers, and the one definition of the lines it exchanges with
 * the driver. On standard output, once started:
 *
 * <pre>
 *   flight grpc URI                          the stock flight-core server of the gRPC baseline
 *   flight PROVIDER URI                      a SluiceFlightServer whose data plane is PROVIDER
 *   table NAME BODY_BYTES ROWS BATCHES IDHASH NAMEBYTES
 *                                            a table every server serves, with its {@link Fingerprint}
 *   ceiling PROVIDER HOST:PORT CHECKSUM      a transport serving the measured table's bodies for the
 *                                            ceiling ({@link CeilingSource}), their {@link BodySum}
 *   segment PROVIDER DESCRIPTOR LENGTH,...   one of its regions (descriptor in hex) and the lengths of
 *                                            the bodies in it, each at the next 8-byte boundary
 *   ready                                    nothing more until a command
 * </pre>
 *
 * Then, for each command line {@code drop NAME} on its standard input (free a table a put
 * stored), the line {@code dropped NAME}. Other output lines (a JVM warning, say) are ignored.
 * Immutable once built.
 *
 * @param servers Flight location per path: {@value #STOCK} for the stock server, else the data-plane provider
 * @param tables the served tables by name
 * @param ceilings the transport ceiling's source per provider
 */
record ServerAnnouncement(Map<String, Location> servers, Map<String, ServedTable> tables,
    Map<String, Ceiling> ceilings) {
  static final String READY = "ready";
  /** The table the rounds measure. */
  static final String TABLE = "bench";
  /** A smaller table of the same rows for the warm-up round. */
  static final String WARMUP_TABLE = "warmup";
  static final String STOCK = "grpc";

  /** A served table: its body bytes and what a reader of all of it sees. */
  record ServedTable(long bodyBytes, Fingerprint.Value fingerprint) {}

  /** A region of a ceiling source and the lengths of the bodies laid in it. */
  record Segment(RemoteDescriptor region, List<Long> bodyLengths) {
    Segment {
      bodyLengths = List.copyOf(bodyLengths);
    }
  }

  /** Where a ceiling source listens, its regions, and the {@link BodySum} checksum of its bodies. */
  record Ceiling(NodeAddress address, List<Segment> segments, long checksum) {
    Ceiling {
      segments = List.copyOf(segments);
    }

    long bodyBytes() {
      return segments.stream().flatMap(s -> s.bodyLengths().stream()).mapToLong(Long::longValue).sum();
    }
  }

  ServerAnnouncement {
    servers = Collections.unmodifiableMap(new LinkedHashMap<>(servers));
    tables = Collections.unmodifiableMap(new LinkedHashMap<>(tables));
    ceilings = Collections.unmodifiableMap(new LinkedHashMap<>(ceilings));
  }

  List<String> lines() {
    List<String> lines = new ArrayList<>();
    servers.forEach((path, location) -> lines.add("flight " + path + " " + location.getUri()));
    tables.forEach((name, t) -> lines.add("table " + name + " " + t.bodyBytes() + " " + t.fingerprint().encode()));
    ceilings.forEach((provider, c) -> {
      lines.add("ceiling " + provider + " " + c.address() + " " + Long.toHexString(c.checksum()));
      for (Segment seg : c.segments()) {
        lines.add("segment " + provider + " " + HexFormat.of().formatHex(seg.region().toBytes()) + " "
            + seg.bodyLengths().stream().map(String::valueOf).collect(Collectors.joining(",")));
      }
    });
    lines.add(READY);
    return lines;
  }

  Location server(String path) throws IOException {
    return announced(servers, path, "Flight server for " + path);
  }

  Ceiling ceiling(String provider) throws IOException {
    return announced(ceilings, provider, "ceiling source for " + provider);
  }

  ServedTable table(String name) throws IOException {
    return announced(tables, name, "table " + name);
  }

  /** The entry of {@code announced} under {@code key}, or an error saying the server announced no {@code what}. */
  private static <V> V announced(Map<String, V> announced, String key, String what) throws IOException {
    V v = announced.get(key);
    if (v == null) {
      throw new IOException("benchmark server announced no " + what);
    }
    return v;
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
    private final Map<String, ServedTable> tables = new LinkedHashMap<>();
    private final Map<String, NodeAddress> ceilingAddresses = new LinkedHashMap<>();
    private final Map<String, Long> ceilingChecksums = new LinkedHashMap<>();
    private final Map<String, List<Segment>> ceilingSegments = new LinkedHashMap<>();

    /**
     * Takes one line; returns the announcement once the ready line arrives.
     *
     * @throws IOException for a malformed announcement, or ready before any table line
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
            expectFields(f, 7, line);
            tables.put(f[1], new ServedTable(Long.parseLong(f[2]), Fingerprint.Value.decode(f, 3)));
          }
          case "ceiling" -> {
            expectFields(f, 4, line);
            ceilingAddresses.put(f[1], NodeAddress.parse(f[2]));
            ceilingChecksums.put(f[1], Long.parseUnsignedLong(f[3], 16));
          }
          case "segment" -> {
            expectFields(f, 4, line);
            if (!ceilingAddresses.containsKey(f[1])) {
              throw new IOException("segment of " + f[1] + " before its ceiling line");
            }
            List<Long> lengths = new ArrayList<>();
            for (String n : f[3].split(",")) {
              lengths.add(Long.parseLong(n));
            }
            ceilingSegments.computeIfAbsent(f[1], k -> new ArrayList<>())
                .add(new Segment(RemoteDescriptor.fromBytes(HexFormat.of().parseHex(f[2])), lengths));
          }
          case READY -> {
            if (tables.isEmpty()) {
              throw new IOException("benchmark server was ready without announcing a table");
            }
            Map<String, Ceiling> ceilings = new LinkedHashMap<>();
            ceilingAddresses.forEach((p, a) -> ceilings.put(p,
                new Ceiling(a, ceilingSegments.getOrDefault(p, List.of()), ceilingChecksums.get(p))));
            return Optional.of(new ServerAnnouncement(servers, tables, ceilings));
          }
          default -> {
            // not an announcement
          }
        }
      } catch (IllegalArgumentException | URISyntaxException e) {
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
