package io.sluice.perf.transport;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What the benchmark server offers, and the one definition of how it announces that on its
 * standard output, a line each:
 *
 * <pre>
 *   socket HOST:PORT                          the plain-socket baseline server
 *   region PROVIDER HOST:PORT DESCRIPTOR_HEX  a transport listening there and a region it serves
 *   ready                                     nothing follows
 * </pre>
 *
 * Other lines (a JVM warning, say) are ignored. Immutable once built.
 *
 * @param socket the plain-socket server
 * @param regions per provider name, the transport address and the descriptor of its region
 */
record ServerEndpoints(NodeAddress socket, Map<String, ServedRegion> regions) {
  static final String READY = "ready";
  private static final HexFormat HEX = HexFormat.of();

  ServerEndpoints {
    regions = Map.copyOf(regions);
  }

  /** A transport's address and the descriptor of the region it serves. */
  record ServedRegion(String provider, NodeAddress address, RemoteDescriptor descriptor) {}

  static String socketLine(NodeAddress socket) {
    return "socket " + socket;
  }

  static String regionLine(ServedRegion r) {
    return "region " + r.provider() + " " + r.address() + " " + HEX.formatHex(r.descriptor().toBytes());
  }

  ServedRegion region(String provider) throws IOException {
    ServedRegion r = regions.get(provider);
    if (r == null) {
      throw new IOException("benchmark server announced no region for provider " + provider);
    }
    return r;
  }

  /** Collects announcement lines until {@link #READY}. Not thread safe. */
  static final class Parser {
    private NodeAddress socket;
    private final Map<String, ServedRegion> regions = new LinkedHashMap<>();

    /**
     * Takes one line; returns the endpoints once the ready line arrives.
     *
     * @throws IOException for a malformed announcement, or ready without a socket line
     */
    Optional<ServerEndpoints> accept(String line) throws IOException {
      String[] f = line.trim().split(" ");
      try {
        switch (f[0]) {
          case "socket" -> {
            expectFields(f, 2, line);
            socket = NodeAddress.parse(f[1]);
          }
          case "region" -> {
            expectFields(f, 4, line);
            RemoteDescriptor d = RemoteDescriptor.fromBytes(HEX.parseHex(f[3]));
            regions.put(f[1], new ServedRegion(f[1], NodeAddress.parse(f[2]), d));
          }
          case READY -> {
            if (socket == null) {
              throw new IOException("benchmark server was ready without announcing its socket");
            }
            return Optional.of(new ServerEndpoints(socket, regions));
          }
          default -> {
            // not an announcement
          }
        }
      } catch (IllegalArgumentException e) {
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
