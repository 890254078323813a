package io.sluice.transport.verbs.provider;

import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.ProtocolException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.util.Collections;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A peer may admit only RDMA sources at its own address. No device needed. */
class AdmissionRuleTest {
  @Test
  void aRemotePeerAdmitsOnlyItsOwnAddress() throws Exception {
    InetAddress peer = InetAddress.getByName("10.77.0.2");
    AdmissionRule.check(new InetSocketAddress(peer, 4000), peer);
    assertThrows(ProtocolException.class,
        () -> AdmissionRule.check(new InetSocketAddress(InetAddress.getByName("10.77.0.3"), 4000), peer));
    assertThrows(ProtocolException.class,
        () -> AdmissionRule.check(new InetSocketAddress(InetAddress.getLoopbackAddress(), 4000), peer));
  }

  @Test
  void aPeerOnThisHostAdmitsAddressesOfThisHostOnly() throws Exception {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    AdmissionRule.check(new InetSocketAddress(loopback, 4000), loopback);
    Optional<InetAddress> local = Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
        .flatMap(nif -> Collections.list(nif.getInetAddresses()).stream())
        .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
        .findFirst();
    if (local.isPresent()) {
      AdmissionRule.check(new InetSocketAddress(local.get(), 4000), loopback);
    }
    // TEST-NET-3 (RFC 5737) is never an address of this host.
    assertThrows(ProtocolException.class,
        () -> AdmissionRule.check(new InetSocketAddress(InetAddress.getByName("203.0.113.9"), 4000), loopback));
  }
}
