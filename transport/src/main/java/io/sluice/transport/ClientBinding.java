package io.sluice.transport;

import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;

/**
 * Where a client's transport listens. A client (a Flight reader, a Hadoop RPC caller) serves its
 * own regions to the servers it calls and to nobody else, so unless {@code
 * sluice.transport.bindHost} is set it listens only on the local address its traffic to the
 * server leaves from, not on every interface. That address is the kernel's choice of source for a
 * datagram socket connected to the server; connecting one sends nothing.
 */
public final class ClientBinding {
  private ClientBinding() {}

  /**
   * {@code config}, listening on the local address that reaches {@code server}, unless it sets a
   * bind host itself. When no such address can be found (the name does not resolve, nothing
   * routes there) it listens on loopback only: never on every interface, and the connection to
   * the server fails on its own.
   */
  public static TransportConfig toward(TransportConfig config, String server) {
    if (config.get(TransportKeys.BIND_HOST.key()).isPresent()) {
      return config;
    }
    return config.with(Map.of(TransportKeys.BIND_HOST.key(), bindHostToward(server)));
  }

  /** The address a client of {@code server} listens on: {@link #localAddressToward}, or loopback. */
  public static String bindHostToward(String server) {
    return localAddressToward(server).map(InetAddress::getHostAddress)
        .orElse(InetAddress.getLoopbackAddress().getHostAddress());
  }

  /** The local address the kernel would send from to reach {@code host}, if it resolves and routes. */
  public static Optional<InetAddress> localAddressToward(String host) {
    try {
      InetAddress server = InetAddress.getByName(host);
      if (server.isLoopbackAddress()) {
        return Optional.of(server);
      }
      if (server.isAnyLocalAddress() || server.isMulticastAddress()) {
        return Optional.empty(); // no one host: nothing to listen toward
      }
      try (DatagramSocket probe = new DatagramSocket()) {
        probe.connect(new InetSocketAddress(server, 9));
        InetAddress local = probe.getLocalAddress();
        return local == null || local.isAnyLocalAddress() ? Optional.empty() : Optional.of(local);
      }
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
