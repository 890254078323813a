package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.transport.NodeAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** An executor's client of the driver's address book, talking to a book directly; no Spark. */
class AddressBookClientTest {
  private final Set<String> removed = ConcurrentHashMap.newKeySet();
  private final AddressBook book = new AddressBook(id -> !removed.contains(id), Optional.of("5ec7e7"));
  private final List<String> asked = new ArrayList<>();
  private final AddressBookClient client = new AddressBookClient(request -> {
    asked.add(request);
    return book.answer(request);
  });

  private static AddressBookMessage.Entry entry(String id, int port) {
    return new AddressBookMessage.Entry(id, new NodeAddress("10.0.0." + id, port), "tcp");
  }

  @Test
  void aRegistrationSentWithoutWaitingCompletesOnceTheBookHasIt() {
    java.util.concurrent.CompletableFuture<String> reply = new java.util.concurrent.CompletableFuture<>();
    List<String> sent = new ArrayList<>();
    AddressBookClient async = new AddressBookClient(book::answer, request -> {
      sent.add(request);
      return reply;
    });
    java.util.concurrent.CompletableFuture<Void> registered = async.registerAsync(entry("1", 7001));
    assertEquals(List.of("register 1 10.0.0.1:7001 tcp"), sent, "sent at once");
    assertTrue(!registered.isDone(), "not registered before the driver answers");
    reply.complete(book.answer(sent.get(0)));
    registered.join();
    assertEquals(Optional.of(entry("1", 7001)), client.lookup("1"));
  }

  @Test
  void aRefusedRegistrationSentWithoutWaitingFailsItsFuture() {
    AddressBookClient refused = new AddressBookClient(r -> "no",
        r -> java.util.concurrent.CompletableFuture.completedFuture("no"));
    java.util.concurrent.CompletionException e = assertThrows(java.util.concurrent.CompletionException.class,
        () -> refused.registerAsync(entry("1", 1)).join());
    assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
    assertTrue(e.getCause().getMessage().contains("refused"), e.getCause().getMessage());
  }

  @Test
  void aFoundPeerIsAskedForOnce() {
    new AddressBookClient(book::answer).register(entry("2", 7002));
    client.register(entry("1", 7001));
    assertEquals(Optional.of(entry("2", 7002)), client.lookup("2"));
    assertEquals(Optional.of(entry("2", 7002)), client.lookup("2"));
    // Its own entry is known without asking.
    assertEquals(Optional.of(entry("1", 7001)), client.lookup("1"));
    assertEquals(List.of("register 1 10.0.0.1:7001 tcp", "lookup 2"), asked);
  }

  @Test
  void aPeerWithoutTransportIsAskedForAgain() {
    assertEquals(Optional.empty(), client.lookup("3"));
    new AddressBookClient(book::answer).register(entry("3", 7003));
    assertEquals(Optional.of(entry("3", 7003)), client.lookup("3"));
    assertEquals(List.of("lookup 3", "lookup 3"), asked);
  }

  @Test
  void goneIsFinalAndAskedOnlyForPeersNotKnownGone() {
    removed.add("5");
    assertEquals(Set.of("5"), client.goneAmong(List.of("4", "5")));
    removed.add("4");
    assertEquals(Set.of("4", "5"), client.goneAmong(List.of("4", "5")));
    assertEquals(Set.of("5"), client.goneAmong(List.of("5")));
    assertEquals(List.of("gone 4 5", "gone 4"), asked);
  }

  @Test
  void listsEveryRegisteredExecutor() {
    client.register(entry("2", 7002));
    client.register(entry("1", 7001));
    assertEquals(List.of(entry("1", 7001), entry("2", 7002)), client.list());
  }

  @Test
  void aRefusedRegistrationIsAnError() {
    AddressBookClient refused = new AddressBookClient(request -> "busy");
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> refused.register(entry("1", 1)));
    assertTrue(e.getMessage().contains("busy"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> refused.lookup("1"));
  }

  @Test
  void theSecretComesFromTheDriver() {
    assertEquals("5ec7e7", client.secret());
    AddressBookClient none = new AddressBookClient(new AddressBook(id -> true, Optional.empty())::answer);
    assertThrows(IllegalStateException.class, none::secret);
  }
}
