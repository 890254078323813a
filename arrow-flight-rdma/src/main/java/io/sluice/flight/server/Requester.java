package io.sluice.flight.server;

/**
 * Whom a stream is served to, for the shares of a {@link StreamPool}: the client it counts against
 * (a transport node the handshake proved, or one gRPC connection) and the host that client comes
 * from ({@link HostKey}).
 */
record Requester(String client, String host) {
  Requester {
    if (client == null || host == null) {
      throw new IllegalArgumentException("a requester needs a client and a host");
    }
  }
}
