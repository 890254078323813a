package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

/** A caller host from a call frame is taken only as an address literal; a name is never looked up. */
class CallerHostTest {
  @Test
  void addressLiteralsAreParsed() throws Exception {
    assertEquals(InetAddress.getByAddress(new byte[] {10, 1, 2, 3}), CallerIdentities.literal("10.1.2.3"));
    assertEquals(InetAddress.getByName("::1"), CallerIdentities.literal("::1"));
    assertEquals(InetAddress.getByName("2001:db8::7"), CallerIdentities.literal("2001:db8::7"));
  }

  @Test
  void namesAndMalformedAddressesAreRefusedWithoutALookUp() {
    for (String host : new String[] {"localhost", "namenode.example", "10.1.2", "10.1.2.256", "1.2.3.4.5",
        "", "::g", "a:b:c:d:e:f:0:1:2"}) {
      UnknownHostException e = assertThrows(UnknownHostException.class, () -> CallerIdentities.literal(host), host);
      if (!host.contains(":")) {
        assertEquals("caller host " + host + " is not an IP address literal; names are not looked up", e.getMessage());
      }
    }
    assertThrows(UnknownHostException.class, () -> CallerIdentities.literal(null));
  }
}
