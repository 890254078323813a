package io.sluice.transport.carrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shared request memory hands out in turn: whoever waits is served before anyone who asks
 * later, memory that returns goes to the first in line, and a session that leaves passes its
 * turn on. Sessions are names here; "resumed" lists those whose turn came, in order.
 */
class SharedRequestMemoryTest {
  private final List<String> resumed = new ArrayList<>();
  private final SharedRequestMemory<String> memory = new SharedRequestMemory<>(100, resumed::add);

  @Test
  void requestsThatFitAreTakenAtOnceWhileNobodyWaits() {
    assertTrue(memory.take("a", 60));
    assertTrue(memory.take("b", 40));
    assertFalse(memory.take("c", 1));
    memory.give(60);
    assertEquals(List.of("c"), resumed);
    assertTrue(memory.take("c", 1));
    assertEquals(59, memory.free());
  }

  @Test
  void aLaterRequestWaitsBehindAnEarlierOneThoughItWouldFit() {
    assertTrue(memory.take("holder", 80));
    assertFalse(memory.take("big", 50));
    assertFalse(memory.take("small", 10), "20 bytes are free, but big came first");
    assertEquals(2, memory.waiting());
    memory.give(30);
    assertEquals(List.of("big"), resumed, "big's turn: 50 free; small still waits behind it");
    assertTrue(memory.take("big", 50));
    memory.give(10);
    assertEquals(List.of("big", "small"), resumed);
    assertTrue(memory.take("small", 10));
    assertEquals(0, memory.waiting());
  }

  @Test
  void theHolderCannotTakeBackWhatReturnsAheadOfOneWaiting() {
    assertTrue(memory.take("holder", 100));
    assertFalse(memory.take("waiter", 30));
    memory.give(10);
    assertFalse(memory.take("holder", 10), "the 10 bytes that returned are the waiter's turn");
    memory.give(20);
    assertEquals(List.of("waiter"), resumed);
    assertTrue(memory.take("waiter", 30));
    // The holder, in line behind the waiter, gets the next bytes that return.
    memory.give(10);
    assertEquals(List.of("waiter", "holder"), resumed);
    assertTrue(memory.take("holder", 10));
  }

  @Test
  void aSessionAskingAgainKeepsItsPlaceInLine() {
    assertTrue(memory.take("holder", 100));
    assertFalse(memory.take("first", 20));
    assertFalse(memory.take("second", 20));
    assertFalse(memory.take("first", 20), "resumed for another reason, it asks again");
    memory.give(20);
    assertEquals(List.of("first"), resumed);
  }

  @Test
  void aSessionThatClosesPassesItsTurnOn() {
    assertTrue(memory.take("holder", 100));
    assertFalse(memory.take("leaves-in-line", 60));
    assertFalse(memory.take("leaves-served", 10));
    assertFalse(memory.take("stays", 30));
    memory.forget("leaves-in-line");
    memory.give(40);
    assertEquals(List.of("leaves-served", "stays"), resumed);
    memory.forget("leaves-served"); // its turn came, but it closed before taking the bytes set aside
    assertTrue(memory.take("stays", 30));
    assertEquals(10, memory.free());
    memory.forget("stays"); // idempotent for a session neither waiting nor set aside for
    assertEquals(10, memory.free());
  }

  @Test
  void aRequestLargerThanTheWholeBudgetGetsInAloneWhenNothingIsHeld() {
    assertTrue(memory.take("a", 1));
    assertFalse(memory.take("huge", 150));
    assertFalse(memory.take("b", 1));
    memory.give(1);
    assertEquals(List.of("huge"), resumed);
    assertTrue(memory.take("huge", 150));
    assertEquals(-50, memory.free());
    memory.give(150);
    assertEquals(List.of("huge", "b"), resumed);
    assertTrue(memory.take("b", 1));
  }
}
