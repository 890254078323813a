package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import io.sluice.transport.NodeAddress;
import java.util.List;
import java.util.Optional;
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
}
