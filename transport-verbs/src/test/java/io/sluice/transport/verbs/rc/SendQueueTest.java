package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.PeerClosedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Retiring send-queue entries from completions in the orders devices report them: in order
 * on InfiniBand and RoCE, SENDs ahead of earlier READs on soft-iWARP (which reports a SEND
 * once transmitted, a READ once its reply is placed), and late completions of a slot's
 * earlier use. Pure Java: no device.
 */
class SendQueueTest {

  /** An entry without a queue pair: only the queue's bookkeeping is under test. */
  private static final class Entry extends SendQueueEntry {
    int freed;

    Entry(long slot, Kind kind) {
      super(null, slot, kind);
    }

    @Override
    void freed() {
      freed++;
    }
  }

  private static CompletableFuture<Void> post(SendQueue queue, Entry entry) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    entry.future = f;
    queue.add(entry);
    return f;
  }

  @Test
  void aSendCompletedBeforeAnEarlierReadRetiresOnlySends() {
    SendQueue queue = new SendQueue(8);
    Entry read = new Entry(1, SendQueueEntry.Kind.READ);
    Entry unsignaledSend = new Entry(2, SendQueueEntry.Kind.SEND);
    Entry signaledSend = new Entry(3, SendQueueEntry.Kind.SEND);
    CompletableFuture<Void> readDone = post(queue, read);
    CompletableFuture<Void> firstSend = post(queue, unsignaledSend);
    CompletableFuture<Void> secondSend = post(queue, signaledSend);

    // soft-iWARP: the signaled SEND completes while the READ's reply is still on its way.
    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(signaledSend, signaledSend.postedWrId(), done));
    assertEquals(List.of(firstSend, secondSend), done, "the SENDs up to the completed one retire");
    assertTrue(read.posted, "the READ stays posted: its bytes have not landed");
    assertEquals(0, read.freed, "the READ's slot is not free for reuse");
    assertSame(readDone, read.future);
    assertEquals(1, queue.size(SendQueueEntry.Kind.READ));
    assertEquals(0, queue.size(SendQueueEntry.Kind.SEND));

    done.clear();
    assertTrue(queue.retireThrough(read, read.postedWrId(), done));
    assertEquals(List.of(readDone), done);
    assertEquals(1, read.freed);
  }

  @Test
  void aReadCompletionRetiresEarlierReadsButNotSends() {
    SendQueue queue = new SendQueue(8);
    Entry first = new Entry(1, SendQueueEntry.Kind.READ);
    Entry send = new Entry(2, SendQueueEntry.Kind.SEND);
    Entry last = new Entry(3, SendQueueEntry.Kind.READ);
    CompletableFuture<Void> a = post(queue, first);
    post(queue, send);
    CompletableFuture<Void> b = post(queue, last);

    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(last, last.postedWrId(), done));
    assertEquals(List.of(a, b), done, "the unsignaled READ before the signaled one retires with it");
    assertTrue(send.posted, "an unsignaled SEND waits for a SEND completion");
    assertEquals(1, queue.size(SendQueueEntry.Kind.SEND));
  }

  @Test
  void inOrderCompletionsRetireEverythingOnce() {
    SendQueue queue = new SendQueue(8);
    List<Entry> entries = new ArrayList<>();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Entry e = new Entry(i + 1, i % 2 == 0 ? SendQueueEntry.Kind.READ : SendQueueEntry.Kind.SEND);
      entries.add(e);
      futures.add(post(queue, e));
    }
    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(entries.get(4), entries.get(4).postedWrId(), done));
    assertTrue(queue.retireThrough(entries.get(5), entries.get(5).postedWrId(), done));
    assertEquals(List.of(futures.get(0), futures.get(2), futures.get(4), futures.get(1), futures.get(3),
        futures.get(5)), done);
    for (Entry e : entries) {
      assertFalse(e.posted);
      assertEquals(1, e.freed, "retired once");
    }
    assertFalse(queue.retireThrough(entries.get(5), entries.get(5).postedWrId(), done),
        "a completion for an entry no longer posted retires nothing");
  }

  @Test
  void aLateCompletionOfAnEarlierUseRetiresNothing() {
    SendQueue queue = new SendQueue(4);
    Entry slot = new Entry(77, SendQueueEntry.Kind.READ);
    post(queue, slot);
    long firstUse = slot.postedWrId();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(slot, firstUse, done));

    CompletableFuture<Void> second = post(queue, slot);
    long secondUse = slot.postedWrId();
    assertNotEquals(firstUse, secondUse, "each post carries the next generation");
    assertEquals(77, WorkRequestIds.slot(secondUse), "the node still routes it to the slot");
    done.clear();
    assertFalse(queue.retireThrough(slot, firstUse, done), "the first use's completion again");
    assertTrue(done.isEmpty());
    assertTrue(slot.posted);
    assertFalse(second.isDone());
    assertTrue(queue.retireThrough(slot, secondUse, done));
    assertEquals(List.of(second), done);
  }

  @Test
  void drainedEntriesFailWithTheQueuePair() {
    SendQueue queue = new SendQueue(4);
    Entry read = new Entry(1, SendQueueEntry.Kind.READ);
    Entry send = new Entry(2, SendQueueEntry.Kind.SEND);
    CompletableFuture<Void> r = post(queue, read);
    CompletableFuture<Void> s = post(queue, send);
    List<Outstanding> out = new ArrayList<>();
    queue.drainTo(out);
    assertEquals(2, out.size());
    out.forEach(o -> o.fail(new PeerClosedException("gone")));
    assertTrue(r.isCompletedExceptionally());
    assertTrue(s.isCompletedExceptionally());
    assertEquals(0, queue.size(SendQueueEntry.Kind.READ) + queue.size(SendQueueEntry.Kind.SEND));
  }

  @Test
  void workRequestIdsCarrySlotAndGeneration() {
    long slot = (1L << WorkRequestIds.SLOT_BITS) - 5;
    long id = WorkRequestIds.of(slot, 12345);
    assertEquals(slot, WorkRequestIds.slot(id));
    assertEquals(12345, WorkRequestIds.generation(id));
    int last = WorkRequestIds.GENERATION_MASK;
    assertEquals(last, WorkRequestIds.generation(WorkRequestIds.of(slot, last)));
    assertEquals(0, WorkRequestIds.next(last), "generations wrap");
    assertEquals(slot, WorkRequestIds.slot(WorkRequestIds.of(slot, last)));
    assertThrows(IllegalArgumentException.class, () -> WorkRequestIds.of(1L << WorkRequestIds.SLOT_BITS, 0));
  }
}
