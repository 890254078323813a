package io.sluice.flight.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** One host does not pass for many: the addresses one host may connect from fold into one key. */
class HostKeyTest {
  @Test
  void everyLoopbackAddressIsOneHost() throws Exception {
    assertEquals(HostKey.LOOPBACK, HostKey.of(InetAddress.getByName("127.0.0.1")));
    assertEquals(HostKey.LOOPBACK, HostKey.of(InetAddress.getByName("127.0.0.2")));
    assertEquals(HostKey.LOOPBACK, HostKey.of(InetAddress.getByName("127.255.0.9")));
    assertEquals(HostKey.LOOPBACK, HostKey.of(InetAddress.getByName("::1")));
  }

  @Test
  void anIpv6HostCountsByItsSlash64() throws Exception {
    String key = HostKey.of(InetAddress.getByName("2001:db8:1:2::1"));
    assertEquals(key, HostKey.of(InetAddress.getByName("2001:db8:1:2:ffff:1234:5678:9abc")));
    assertNotEquals(key, HostKey.of(InetAddress.getByName("2001:db8:1:3::1")));
  }

  @Test
  void anIpv4HostIsItsAddressHoweverItArrives() throws Exception {
    assertEquals("192.0.2.7", HostKey.of(InetAddress.getByName("192.0.2.7")));
    byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, (byte) 192, 0, 2, 7};
    assertEquals("192.0.2.7", HostKey.of(java.net.Inet6Address.getByAddress(null, mapped, null)));
    assertEquals("192.0.2.7", HostKey.of(new InetSocketAddress("192.0.2.7", 4242)));
    assertNotEquals(HostKey.of(InetAddress.getByName("192.0.2.7")), HostKey.of(InetAddress.getByName("192.0.2.8")));
  }

  @Test
  void anAddressNobodyToldIsOneHostOfItsOwn() {
    assertEquals(HostKey.UNKNOWN, HostKey.of((InetAddress) null));
    assertEquals(HostKey.UNKNOWN, HostKey.of(InetSocketAddress.createUnresolved("nowhere.invalid", 1)));
  }
}
