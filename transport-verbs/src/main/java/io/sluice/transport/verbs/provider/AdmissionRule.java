package io.sluice.transport.verbs.provider;

import io.sluice.transport.ProtocolException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;

/**
 * Which RDMA sources an authenticated peer may admit: only its own addresses, that is the one
 * its tcp connection comes from, or, for a peer on this host (a loopback connection), an
 * address of this host. Without this, any authenticated peer could let a third host's queue
 * pair in. Stateless.
 */
final class AdmissionRule {
  private AdmissionRule() {}

  static void check(InetSocketAddress source, InetAddress peerAddress) throws ProtocolException {
    InetAddress ip = source.getAddress();
    boolean own;
    if (peerAddress.isLoopbackAddress()) {
      try {
        own = ip.isLoopbackAddress() || NetworkInterface.getByInetAddress(ip) != null;
      } catch (SocketException e) {
        own = false;
      }
    } else {
      own = ip.equals(peerAddress);
    }
    if (!own) {
      throw new ProtocolException("a peer connected from " + peerAddress.getHostAddress()
          + " may not admit RDMA connections from " + ip.getHostAddress());
    }
  }
}
