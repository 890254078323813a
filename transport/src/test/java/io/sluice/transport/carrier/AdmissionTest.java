package io.sluice.transport.carrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The bounds on unauthenticated connections, without sockets. */
class AdmissionTest {
  /** An address of network {@code net}: each number is a /24 of its own. */
  private static InetAddress address(int net) throws Exception {
    return InetAddress.getByAddress(new byte[] {10, 0, (byte) net, 1});
  }

  /** {@code a} after admitting {@code names}, the i-th from address i + 1. */
  private static Admission<String> holding(Admission<String> a, String... names) throws Exception {
    for (int i = 0; i < names.length; i++) {
      assertTrue(a.admit(names[i], address(i + 1)).admitted(), names[i]);
    }
    return a;
  }

  @Test
  void beyondItsBoundANetworkMakesRoomFromItsOwnAndOthersStillGetIn() throws Exception {
    Admission<String> a = new Admission<>(10, 2);
    assertTrue(a.admit("a1", address(1)).admitted());
    assertTrue(a.admit("a2", address(1)).admitted());
    a.greeted("a2");
    Admission.Decision<String> third = a.admit("a3", address(1));
    assertTrue(third.admitted());
    assertEquals(Optional.of("a1"), third.evicted(), "the silent one of the same network makes room");
    assertEquals(2, a.waitingFrom(address(1)));
    assertTrue(a.admit("b1", address(2)).admitted());
    assertEquals(Optional.empty(), a.admit("b2", address(2)).evicted(), "another network is not touched");
    a.done("a3");
    assertEquals(Optional.empty(), a.admit("a4", address(1)).evicted(), "an authenticated connection no longer counts");
    assertEquals(4, a.waiting());
  }

  @Test
  void atTheGlobalBoundASilentConnectionMakesRoomNeverOneThatSaidHello() throws Exception {
    Admission<String> a = new Admission<>(3, 100);
    a.admit("honest", address(200));
    a.greeted("honest");
    for (int i = 0; i < 300; i++) {
      Admission.Decision<String> d = a.admit("flood" + i, address(i % 100));
      assertTrue(d.admitted());
      if (i >= 2) {
        assertTrue(d.evicted().isPresent() && d.evicted().get().startsWith("flood"),
            "evicted " + d.evicted() + " while silent connections wait");
      }
      assertTrue(a.waiting() <= 3);
    }
    assertEquals(3, a.waiting());
    assertEquals(1, a.waitingFrom(address(200)), "the connection that said HELLO is still waiting");
  }

  @Test
  void theVictimIsChosenAtRandomNotTheOldest() throws Exception {
    // The random source picks the second of the candidates (in the pool's order).
    Admission<String> a = holding(new Admission<>(3, 3, n -> 1), "x", "y", "z");
    Admission.Decision<String> d = a.admit("w", address(4));
    assertTrue(d.admitted());
    assertEquals(Optional.of("y"), d.evicted());
    assertEquals(1, a.waitingFrom(address(1)), "the oldest is still waiting");
    assertEquals(0, a.waitingFrom(address(2)), "the evicted connection's address is freed");
    assertEquals(3, a.waiting());
  }

  @Test
  void whenEveryoneSaidHelloOneOfThemMakesRoom() throws Exception {
    Admission<String> a = holding(new Admission<>(2, 2, n -> 0), "x", "y");
    a.greeted("x");
    a.greeted("y");
    a.greeted("unknown");
    Admission.Decision<String> d = a.admit("z", address(3));
    assertTrue(d.admitted());
    String evicted = d.evicted().orElseThrow();
    assertTrue(Set.of("x", "y").contains(evicted), evicted);
    a.done(evicted); // the evicted connection's close, which comes later, no longer counts
    assertEquals(2, a.waiting());
  }

  @Test
  void doneIsIdempotentAndCountsStayExact() throws Exception {
    Admission<String> a = holding(new Admission<>(5, 5), "c");
    a.done("c");
    a.done("c");
    a.done("never-admitted");
    assertEquals(0, a.waiting());
    assertEquals(0, a.waitingFrom(address(1)));
  }

  @Test
  void boundsMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new Admission<String>(0, 1));
    assertThrows(IllegalArgumentException.class, () -> new Admission<String>(1, 0));
  }

  @Test
  void theBoundIsPerIpv4Slash24AndIpv6Slash64NotPerAddress() throws Exception {
    Admission<String> a = new Admission<>(100, 2, n -> 0);
    assertEquals(Optional.empty(), a.admit("a", InetAddress.getByName("192.0.2.1")).evicted());
    assertEquals(Optional.empty(), a.admit("b", InetAddress.getByName("192.0.2.77")).evicted());
    assertEquals(Optional.of("a"), a.admit("c", InetAddress.getByName("192.0.2.200")).evicted(),
        "a third address of the same /24");
    assertTrue(a.admit("d", InetAddress.getByName("::ffff:192.0.2.9")).evicted().isPresent(),
        "IPv4-mapped counts as IPv4");
    assertEquals(Optional.empty(), a.admit("e", InetAddress.getByName("192.0.3.1")).evicted(),
        "the next /24 is another network");
    assertEquals(Optional.empty(), a.admit("f", InetAddress.getByName("2001:db8:0:1::1")).evicted());
    assertEquals(Optional.empty(), a.admit("g", InetAddress.getByName("2001:db8:0:1:ffff::2")).evicted());
    assertTrue(a.admit("h", InetAddress.getByName("2001:db8:0:1:abcd::3")).evicted().isPresent(),
        "a third of the same /64");
    assertEquals(Optional.empty(), a.admit("i", InetAddress.getByName("2001:db8:0:2::1")).evicted(),
        "the next /64 is another network");
    assertEquals(2, a.waitingFrom(InetAddress.getByName("192.0.2.5")));
  }
}
