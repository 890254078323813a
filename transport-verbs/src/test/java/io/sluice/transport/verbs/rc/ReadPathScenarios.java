package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvSendWR;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportTimeoutException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * What the READ path hands to the device, checked in the library's own memory without a
 * device: each post is one chain of the slots it filled, linked in ring order, with the last
 * alone signaled, and a reused slot carries only its new READ's fields. Runs inside the DiSNI
 * runtime's loader (the chain lives in the library): {@code ReadPathTest} runs each scenario
 * by name.
 */
public final class ReadPathScenarios implements Consumer<String> {

  /** What a post handed to the device: for each READ of the chain, its slot's fields. */
  private record Post(int first, List<long[]> reads) {}

  private static final int WR_ID = 0;
  private static final int NEXT = 1;
  private static final int FLAGS = 2;
  private static final int OPCODE = 3;
  private static final int NUM_SGE = 4;
  private static final int REMOTE = 5;
  private static final int RKEY = 6;
  private static final int LOCAL = 7;
  private static final int LENGTH = 8;
  private static final int LKEY = 9;

  private final List<Post> posts = new ArrayList<>();
  private final AtomicLong ids = new AtomicLong(1000);

  @Override
  public void accept(String scenario) {
    try {
      Map.<String, Runnable>of(
          "mixedSizesPostAsOneChain", this::mixedSizesPostAsOneChain,
          "reusedSlotCarriesNothingStale", this::reusedSlotCarriesNothingStale,
          "readsBeyondTheRingWaitAndWrapAround", this::readsBeyondTheRingWaitAndWrapAround,
          "chainRejectsBadRanges", this::chainRejectsBadRanges).get(scenario).run();
    } finally {
      posts.clear();
    }
  }

  private ReadPath path(SendQueue queue, int capacity) {
    try {
      ReadChain chain = new ReadChain(capacity);
      return new ReadPath(null, ids::incrementAndGet, queue, chain, (first, count) -> {
        chain.link(first, count);
        List<long[]> chained = new ArrayList<>();
        for (long at = first; at >= 0 && chained.size() <= capacity; at = chained.get(chained.size() - 1)[NEXT]) {
          chained.add(chain.inspect((int) at));
        }
        posts.add(new Post(first, chained));
      });
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static RdmaRead read(int n, int length) {
    return new RdmaRead(0x7f00_0000_0000L + n * 0x10_0000L, 0x100 + n, 0x5500_0000L + n * 0x1000L, 0x200 + n, length);
  }

  private static void assertCarries(long[] slot, long wrId, RdmaRead read, boolean signaled) {
    assertEquals(wrId, slot[WR_ID], "wr_id");
    assertEquals(signaled ? IbvSendWR.IBV_SEND_SIGNALED : 0, slot[FLAGS], "send_flags");
    assertEquals(IbvSendWR.IBV_WR_RDMA_READ, slot[OPCODE], "opcode");
    assertEquals(1, slot[NUM_SGE], "num_sge");
    assertEquals(read.remoteAddress(), slot[REMOTE], "remote_addr");
    assertEquals(read.rkey(), slot[RKEY], "rkey");
    assertEquals(read.localAddress(), slot[LOCAL], "sge addr");
    assertEquals(read.length(), slot[LENGTH], "sge length");
    assertEquals(read.lkey(), slot[LKEY], "sge lkey");
  }

  private void mixedSizesPostAsOneChain() {
    SendQueue queue = new SendQueue(8);
    ReadPath path = path(queue, 8);
    int[] lengths = {1, 4096, 65536, 1 << 20, 12345};
    List<RdmaRead> reads = new ArrayList<>();
    for (int i = 0; i < lengths.length; i++) {
      reads.add(read(i, lengths[i]));
      path.submit(reads.get(i), new CompletableFuture<>(), Long.MAX_VALUE);
    }
    post(path);
    assertEquals(1, posts.size(), "one post for the batch");
    List<long[]> chained = posts.get(0).reads();
    assertEquals(lengths.length, chained.size());
    for (int i = 0; i < lengths.length; i++) {
      long[] slot = chained.get(i);
      assertCarries(slot, path.slots()[i].postedWrId(), reads.get(i), i == lengths.length - 1);
      assertEquals(i == lengths.length - 1 ? -1 : i + 1, slot[NEXT], "link of READ " + i);
    }
    path.close();
  }

  private void reusedSlotCarriesNothingStale() {
    SendQueue queue = new SendQueue(3);
    ReadPath path = path(queue, 3);
    ReadPath.ReadSlot[] slots = path.slots();
    // Post 1, slot 0: a large READ, alone in its post (so signaled and the end of its chain),
    // that passes its deadline; the device then fails it (the owner fails the queue pair on
    // the error; the slot is retired all the same).
    CompletableFuture<Void> a = new CompletableFuture<>();
    path.submit(read(1, 1 << 20), a, 0);
    post(path);
    long firstUse = slots[0].postedWrId();
    assertTrue(path.expired(1, () -> new TransportTimeoutException("late")));
    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(slots[0], slots[0].postedWrId(), done));
    assertSame(a, done.get(0));
    // Post 2, slots 1 and 2: slot 1 unsignaled and linked, slot 2 signaled and the end.
    path.submit(read(2, 512), new CompletableFuture<>(), Long.MAX_VALUE);
    path.submit(read(3, 64), new CompletableFuture<>(), Long.MAX_VALUE);
    post(path);
    assertTrue(queue.retireThrough(slots[2], slots[2].postedWrId(), done));
    // Post 3 reuses slots 0 and 1 the other way round: 0 now unsignaled and linked, 1 signaled and the end.
    CompletableFuture<Void> d = new CompletableFuture<>();
    path.submit(read(4, 4096), d, Long.MAX_VALUE);
    path.submit(read(5, 65536), new CompletableFuture<>(), Long.MAX_VALUE);
    post(path);
    Post reuse = posts.get(2);
    assertEquals(0, reuse.first());
    assertEquals(2, reuse.reads().size());
    assertCarries(reuse.reads().get(0), slots[0].postedWrId(), read(4, 4096), false);
    assertNotEquals(firstUse, slots[0].postedWrId(), "a reused slot posts with its next generation");
    assertFalse(queue.retireThrough(slots[0], firstUse, done), "a late completion of the first use retires nothing");
    assertEquals(1, reuse.reads().get(0)[NEXT], "the reused slot links to the next one");
    assertCarries(reuse.reads().get(1), slots[1].postedWrId(), read(5, 65536), true);
    assertEquals(-1, reuse.reads().get(1)[NEXT], "the last slot ends the chain");
    // Neither the deadline nor the timeout of the earlier READ stays with slot 0.
    assertFalse(path.expired(2, () -> new TransportTimeoutException("late")));
    assertSame(d, slots[0].future);
    slots[0].fail(new PeerClosedException("closed"));
    ExecutionException e = assertThrows(ExecutionException.class, d::get);
    assertTrue(e.getCause() instanceof PeerClosedException, "the reused slot failed with " + e.getCause());
    path.close();
  }

  private void readsBeyondTheRingWaitAndWrapAround() {
    SendQueue queue = new SendQueue(3);
    ReadPath path = path(queue, 3);
    for (int i = 0; i < 5; i++) {
      path.submit(read(i, 100 + i), new CompletableFuture<>(), Long.MAX_VALUE);
    }
    post(path);
    assertEquals(3, posts.get(0).reads().size(), "the ring holds three");
    List<CompletableFuture<Void>> done = new ArrayList<>();
    assertTrue(queue.retireThrough(path.slots()[1], path.slots()[1].postedWrId(), done));
    assertEquals(2, done.size());
    post(path);
    Post wrapped = posts.get(1);
    assertEquals(0, wrapped.first());
    assertEquals(2, wrapped.reads().size());
    assertCarries(wrapped.reads().get(0), path.slots()[0].postedWrId(), read(3, 103), false);
    assertCarries(wrapped.reads().get(1), path.slots()[1].postedWrId(), read(4, 104), true);
    List<Outstanding> left = new ArrayList<>();
    path.drainWaiting(left);
    assertEquals(0, left.size());
    path.close();
  }

  private void chainRejectsBadRanges() {
    try (ReadChain chain = new ReadChain(4)) {
      assertThrows(IOException.class, () -> chain.link(4, 1));
      assertThrows(IOException.class, () -> chain.link(0, 5));
      assertThrows(IOException.class, () -> chain.link(0, 0));
      chain.link(3, 4);
      assertArrayEquals(new long[] {0, 1, 2, -1}, new long[] {chain.inspect(3)[NEXT], chain.inspect(0)[NEXT],
          chain.inspect(1)[NEXT], chain.inspect(2)[NEXT]});
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    assertThrows(IOException.class, () -> new ReadChain(0));
  }

  private static void post(ReadPath path) {
    try {
      path.post();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
