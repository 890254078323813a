package io.sluice.flight.server;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;

/**
 * The host a client comes from, as the server's per-host shares count it: the IP address of the
 * client's connection as the server's socket sees it, folded so that one host does not pass for
 * many. Every loopback address (all of 127.0.0.0/8, and ::1) is {@value #LOOPBACK}, since a process
 * on the server's host may connect from any of them; an IPv4-mapped IPv6 address is its IPv4
 * address; any other IPv6 address counts by its /64, the prefix a network hands one host, within
 * which it may choose addresses freely. An address the server could not learn is {@value #UNKNOWN}:
 * all such clients share one host's share.
 *
 * <p>A process on the server's host may still connect from each address the host has (a few), so
 * it holds at most that many host shares; the totals bound them all.
 *
 * <p>Stateless.
 */
final class HostKey {
  static final String LOOPBACK = "loopback";
  static final String UNKNOWN = "unknown";

  private HostKey() {}

  /** The host of {@code address}; {@link #UNKNOWN} for null. */
  static String of(InetAddress address) {
    if (address == null) {
      return UNKNOWN;
    }
    if (address.isLoopbackAddress()) {
      return LOOPBACK;
    }
    if (address instanceof Inet6Address) {
      byte[] b = address.getAddress();
      if (ipv4Mapped(b)) {
        try {
          return of(InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]}));
        } catch (UnknownHostException e) {
          throw new IllegalStateException("four bytes are an IPv4 address", e);
        }
      }
      byte[] prefix = new byte[16];
      System.arraycopy(b, 0, prefix, 0, 8);
      try {
        return InetAddress.getByAddress(prefix).getHostAddress() + "/64";
      } catch (UnknownHostException e) {
        throw new IllegalStateException("sixteen bytes are an IPv6 address", e);
      }
    }
    return address.getHostAddress();
  }

  /**
   * The host of a gRPC peer's {@code address}: its IP address's for a network socket, {@link
   * #LOOPBACK} for another kind (an in-process or Unix domain channel: a process of this host).
   */
  static String of(SocketAddress address) {
    if (address == null) {
      return UNKNOWN;
    }
    if (address instanceof InetSocketAddress inet) {
      return inet.getAddress() == null ? UNKNOWN : of(inet.getAddress());
    }
    return LOOPBACK;
  }

  private static boolean ipv4Mapped(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
  }
}
