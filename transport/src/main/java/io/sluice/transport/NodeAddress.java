package io.sluice.transport;

import java.util.Objects;

/**
 * Where a transport listens: a host name or literal address and a TCP port. Every provider
 * uses a TCP port for connection set-up (rdma_cm on verbs resolves the same address).
 */
public record NodeAddress(String host, int port) {
  public NodeAddress {
    Objects.requireNonNull(host, "host");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
  }

  /** Parses {@code host:port}; IPv6 literals are written {@code [addr]:port}. */
  public static NodeAddress parse(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("expected host:port, got '" + text + "'");
    }
    String host = text.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return new NodeAddress(host, Integer.parseInt(text.substring(colon + 1)));
  }

  @Override
  public String toString() {
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
  }
}
