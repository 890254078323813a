package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.config.TransportKeys;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ClientBindingTest {
  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  /** The harness's configuration less its bind host: what a client gets when it sets none. */
  private TransportConfig unbound() {
    Map<String, String> m = new java.util.HashMap<>(harness.config(Map.of()));
    m.remove(TransportKeys.BIND_HOST.key());
    return TransportConfig.of(m);
  }

  @Test
  void aClientOfALoopbackServerListensOnLoopbackOnly() throws Exception {
    Transport server = harness.open(MessageHandler.REJECT_ALL);
    TransportConfig config = ClientBinding.toward(unbound(), server.localAddress().host());
    assertEquals("127.0.0.1", config.value(TransportKeys.BIND_HOST));
    try (Transport client = Transports.open(config, MessageHandler.REJECT_ALL)) {
      assertEquals("127.0.0.1", client.localAddress().host());
      TransportHarness.connect(client, server).close();
    }
  }

  @Test
  void aServerOnAnotherInterfaceIsReachedFromThatInterfacesAddress() throws Exception {
    Optional<InetAddress> own = NetworkInterface.networkInterfaces()
        .filter(i -> { try { return i.isUp() && !i.isLoopback(); } catch (java.net.SocketException e) { return false; } })
        .flatMap(NetworkInterface::inetAddresses)
        .filter(a -> a instanceof Inet4Address && !a.isLinkLocalAddress())
        .findFirst();
    assumeTrue(own.isPresent(), "this host has no IPv4 address but loopback");
    assertEquals(own, ClientBinding.localAddressToward(own.get().getHostAddress()));
  }

  @Test
  void aBindHostThatIsSetIsKeptAndAServerWithNoRouteGetsLoopbackOnly() {
    TransportConfig set = unbound().with(Map.of(TransportKeys.BIND_HOST.key(), "0.0.0.0"));
    assertSame(set, ClientBinding.toward(set, "127.0.0.1"));
    for (String nowhere : java.util.List.of("no-such-host.invalid", "0.0.0.0", "224.0.0.1")) {
      assertEquals("127.0.0.1", ClientBinding.toward(unbound(), nowhere).value(TransportKeys.BIND_HOST),
          "a client of " + nowhere + " listens on loopback only");
    }
  }
}
