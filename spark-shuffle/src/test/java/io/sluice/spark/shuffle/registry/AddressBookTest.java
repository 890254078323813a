package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.transport.NodeAddress;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The driver's address book answering the address book messages, and malformed messages; no Spark, no sockets. */
class AddressBookTest {
  @Test
  void addressBookProtocol() {
    AddressBook book = new AddressBook(id -> !id.equals("5"), Optional.empty());
    AddressBookMessage.Entry e = new AddressBookMessage.Entry("3", new NodeAddress("10.0.0.5", 4242), "tcp");
    assertEquals(AddressBookMessage.OK, book.answer(AddressBookMessage.register(e)));
    assertEquals(Optional.of(e), AddressBookMessage.decodeLookupReply(book.answer(AddressBookMessage.lookup("3"))));
    assertEquals(Optional.empty(), AddressBookMessage.decodeLookupReply(book.answer(AddressBookMessage.lookup("4"))));
    assertEquals(List.of(e), AddressBookMessage.decodeList(book.answer(AddressBookMessage.list())));
    assertThrows(IllegalArgumentException.class, () -> book.answer("forget 3"));
    assertThrows(IllegalArgumentException.class,
        () -> AddressBookMessage.register(new AddressBookMessage.Entry("a b", new NodeAddress("h", 1), "tcp")));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.decodeLookupReply("maybe"));
  }

  @Test
  void addressBookNamesGoneExecutors() {
    AddressBook book = new AddressBook(id -> !id.equals("5") && !id.equals("7"), Optional.empty());
    assertEquals(java.util.Set.of("5", "7"),
        AddressBookMessage.decodeGone(book.answer(AddressBookMessage.gone(List.of("3", "5", "7", "8")))));
    assertEquals(java.util.Set.of(), AddressBookMessage.decodeGone(book.answer(AddressBookMessage.gone(List.of("3")))));
    assertEquals(java.util.Set.of(), AddressBookMessage.decodeGone(book.answer(AddressBookMessage.gone(List.of()))));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.gone(List.of("a b")));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.decodeGone("found 3"));
  }

  @Test
  void theBookHandsOutTheSecretItWasGivenAndNoneOtherwise() {
    AddressBook handing = new AddressBook(id -> true, Optional.of("00ff"));
    assertEquals(Optional.of("00ff"), AddressBookMessage.decodeSecretReply(handing.answer(AddressBookMessage.secret())));
    AddressBook silent = new AddressBook(id -> true, Optional.empty());
    assertEquals(Optional.empty(), AddressBookMessage.decodeSecretReply(silent.answer(AddressBookMessage.secret())));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.decodeSecretReply("found 3"));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.secretReply("not hex"));
  }

  @Test
  void metricsReportsAreAddedUpOverExecutorsKeepingTheLastOfEach() {
    AddressBook book = new AddressBook(id -> true, Optional.empty());
    book.answer(AddressBookMessage.metrics(new AddressBookMessage.MetricsReport("1", java.util.Map.of("reads.shm.bytes", 10L))));
    book.answer(AddressBookMessage.metrics(new AddressBookMessage.MetricsReport("1", java.util.Map.of("reads.shm.bytes", 30L))));
    book.answer(AddressBookMessage.metrics(new AddressBookMessage.MetricsReport("2", java.util.Map.of("reads.shm.bytes", 5L))));
    assertEquals(35, book.metricTotal("reads.shm.bytes"));
    assertEquals(0, book.metricTotal("reads.tcp.bytes"));
    assertEquals(2, book.reportingExecutors());
    AddressBookMessage.MetricsReport r = AddressBookMessage.decodeMetrics("metrics 7 a.b=1 c=-2");
    assertEquals("7", r.executorId());
    assertEquals(java.util.Map.of("a.b", 1L, "c", -2L), r.values());
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> book.answer("metrics 1 reads.shm.bytes=many"));
    assertEquals("metric 'reads.shm.bytes=many' of executor 1 is not a whole number", bad.getMessage());
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.decodeMetrics("metrics 1 =3"));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.metrics(
        new AddressBookMessage.MetricsReport("1", java.util.Map.of("a b", 1L))));
  }

  @Test
  void aLookupOfAnExecutorStillOpeningIsAnsweredWhenItRegisters() {
    AddressBook book = new AddressBook(id -> true, Optional.empty(), 60_000);
    assertEquals(AddressBookMessage.OK, book.answer(AddressBookMessage.opening("3")));
    CompletableFuture<String> held = book.answerAsync(AddressBookMessage.lookup("3"));
    assertFalse(held.isDone());
    // The lookup that does not wait says what the book has now.
    assertEquals(AddressBookMessage.UNKNOWN, book.answer(AddressBookMessage.lookup("3")));
    AddressBookMessage.Entry e = new AddressBookMessage.Entry("3", new NodeAddress("10.0.0.5", 4242), "tcp");
    book.answer(AddressBookMessage.register(e));
    assertEquals(Optional.of(e), AddressBookMessage.decodeLookupReply(held.join()));
    assertEquals(0, book.openingExecutors());
    // Announced again (a late announcement) after it registered: found at once.
    book.answer(AddressBookMessage.opening("3"));
    assertEquals(Optional.of(e), AddressBookMessage.decodeLookupReply(book.answerAsync(AddressBookMessage.lookup("3")).join()));
    // Never announced: unknown at once.
    assertEquals(AddressBookMessage.UNKNOWN, book.answerAsync(AddressBookMessage.lookup("4")).join());
  }

  @Test
  void aLookupOfAnExecutorStillOpeningEndsWithItsWithdrawalItsRemovalOrTheHoldTime() {
    Set<String> removed = ConcurrentHashMap.newKeySet();
    AddressBook book = new AddressBook(id -> !removed.contains(id), Optional.empty(), 60_000);
    book.answer(AddressBookMessage.opening("3"));
    CompletableFuture<String> held = book.answerAsync(AddressBookMessage.lookup("3"));
    assertEquals(AddressBookMessage.OK, book.answer(AddressBookMessage.withdraw("3")));
    assertEquals(AddressBookMessage.UNKNOWN, held.join());
    assertEquals(0, book.openingExecutors());
    book.answer(AddressBookMessage.opening("5"));
    CompletableFuture<String> heldBeforeRemoval = book.answerAsync(AddressBookMessage.lookup("5"));
    removed.add("5");
    // The next lookup finds it removed and ends its open: the held one gets its answer too.
    assertEquals(AddressBookMessage.UNKNOWN, book.answerAsync(AddressBookMessage.lookup("5")).join());
    assertEquals(AddressBookMessage.UNKNOWN, heldBeforeRemoval.join());
    assertEquals(0, book.openingExecutors());

    AddressBook brief = new AddressBook(id -> true, Optional.empty(), 50);
    brief.answer(AddressBookMessage.opening("7"));
    assertEquals(AddressBookMessage.UNKNOWN, brief.answerAsync(AddressBookMessage.lookup("7")).join());
    // A withdrawal of an executor that never announced, and malformed ones.
    assertEquals(AddressBookMessage.OK, brief.answer(AddressBookMessage.withdraw("8")));
    assertThrows(IllegalArgumentException.class, () -> brief.answer("opening "));
    assertThrows(IllegalArgumentException.class, () -> brief.answer("withdraw 1 2"));
    assertThrows(IllegalArgumentException.class, () -> AddressBookMessage.opening("a b"));
  }

  @Test
  void announcementsAreBoundedAndRemovedExecutorsMakeRoom() {
    Set<String> removed = ConcurrentHashMap.newKeySet();
    AddressBook book = new AddressBook(id -> !removed.contains(id), Optional.empty(), 60_000);
    for (int i = 0; i < AddressBook.MAX_OPENING; i++) {
      book.answer(AddressBookMessage.opening("e" + i));
    }
    assertThrows(IllegalStateException.class, () -> book.answer(AddressBookMessage.opening("one-more")));
    // An executor already announced may announce again; a registration still ends its open.
    assertEquals(AddressBookMessage.OK, book.answer(AddressBookMessage.opening("e0")));
    book.answer(AddressBookMessage.register(new AddressBookMessage.Entry("e0", new NodeAddress("h", 1), "tcp")));
    assertEquals(AddressBook.MAX_OPENING - 1, book.openingExecutors());
    book.answer(AddressBookMessage.opening("filler"));
    assertEquals(AddressBook.MAX_OPENING, book.openingExecutors());
    // At the bound, executors removed while they opened are taken off first.
    removed.add("e1");
    removed.add("e2");
    assertEquals(AddressBookMessage.OK, book.answer(AddressBookMessage.opening("one-more")));
    assertEquals(AddressBook.MAX_OPENING - 1, book.openingExecutors());
  }
}
