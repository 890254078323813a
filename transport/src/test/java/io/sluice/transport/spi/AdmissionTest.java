package io.sluice.transport.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The bounds on unauthenticated connections, without sockets. */
class AdmissionTest {
  private static InetAddress address(int last) throws Exception {
    return InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) last});
  }

  @Test
  void oneAddressIsRefusedBeyondItsBoundAndOthersStillGetIn() throws Exception {
    Admission<String> a = new Admission<>(10, 2);
    assertTrue(a.admit("a1", address(1)).admitted());
    assertTrue(a.admit("a2", address(1)).admitted());
    Admission.Decision<String> refused = a.admit("a3", address(1));
    assertFalse(refused.admitted());
    assertEquals(Optional.empty(), refused.evicted());
    assertTrue(a.admit("b1", address(2)).admitted());
    a.done("a1");
    assertTrue(a.admit("a4", address(1)).admitted(), "an authenticated connection no longer counts");
    assertEquals(3, a.waiting());
  }

  @Test
  void atTheGlobalBoundTheOldestMakesRoom() throws Exception {
    Admission<String> a = new Admission<>(3, 3);
    a.admit("x", address(1));
    a.admit("y", address(2));
    a.admit("z", address(3));
    Admission.Decision<String> d = a.admit("honest", address(4));
    assertTrue(d.admitted());
    assertEquals(Optional.of("x"), d.evicted());
    assertEquals(3, a.waiting());
    assertEquals(0, a.waitingFrom(address(1)), "the evicted connection's address is freed");
    assertEquals(Optional.of("y"), a.admit("next", address(4)).evicted());
  }

  @Test
  void doneIsIdempotentAndCountsStayExact() throws Exception {
    Admission<String> a = new Admission<>(5, 5);
    a.admit("c", address(1));
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
}
