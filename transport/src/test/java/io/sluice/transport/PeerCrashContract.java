package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.DEADLINE;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.options;
import static io.sluice.transport.TransportTestSupport.patternMismatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A peer JVM killed with SIGKILL in the middle of a transfer: every READ still outstanding fails
 * with {@link PeerClosedException} (not a timeout: the close must be noticed), none hangs, and
 * later calls on the dead connection fail at once.
 */
public interface PeerCrashContract extends TransportContractFixture {
  int PEER_REGION_BYTES = 32 << 20;
  int CRASH_READ_LEN = 1 << 20;
  int SLOTS = 32;
  long PEER_SEED = 1234;

  @Test
  default void peerKilledMidTransferFailsOutstandingReads() throws Exception {
    Path peerShm = harness().scratchShmDir("peer");
    // The I/O deadline is far beyond the test's deadline: a timeout cannot pass for a close.
    Map<String, String> timeouts = options(TransportOption.IO_TIMEOUT_MS, 120_000);
    Map<String, String> peerOptions = harness().config(timeouts);
    peerOptions.put(TransportOption.SHM_DIR.key(), peerShm.toString());
    Transport client = harness().open(MessageHandler.REJECT_ALL, timeouts);

    try (PeerProcessHandle peer = PeerProcessHandle.start(peerOptions, PEER_REGION_BYTES, PEER_SEED);
        RegisteredRegion dst = client.allocate(SLOTS * CRASH_READ_LEN)) {
      RemoteDescriptor d = peer.descriptor();
      assertEquals(PEER_REGION_BYTES, d.length());
      Connection c = TransportTestSupport.await(client.connect(peer.address()));

      BlockingQueue<Integer> free = new ArrayBlockingQueue<>(SLOTS);
      for (int i = 0; i < SLOTS; i++) {
        free.add(i);
      }
      AtomicInteger completed = new AtomicInteger();
      Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
      Queue<String> wrongBytes = new ConcurrentLinkedQueue<>();
      Random random = new Random(8);
      boolean killed = false;
      int issuedAfterKill = 0;
      long end = System.nanoTime() + DEADLINE.toNanos();
      // Keep SLOTS READs in flight; kill the peer once data is flowing, and keep issuing until
      // the connection reports the loss. Each of the two waits has a deadline of its own.
      while (!killed || failures.isEmpty()) {
        if (!killed && completed.get() >= 8) {
          peer.kill();
          killed = true;
          end = System.nanoTime() + DEADLINE.toNanos();
        }
        if (System.nanoTime() - end > 0) {
          throw new AssertionError(killed
              ? issuedAfterKill + " READs issued after the kill and none failed; " + completed.get() + " completed"
              : "only " + completed.get() + " READs completed before the deadline\n" + peer.logTail());
        }
        Integer slot = free.poll(50, TimeUnit.MILLISECONDS);
        if (slot == null) {
          continue;
        }
        long remote = (long) random.nextInt(PEER_REGION_BYTES / CRASH_READ_LEN) * CRASH_READ_LEN
            - (slot % 2 == 0 ? 0 : 17);
        long remoteOffset = Math.max(0, remote);
        long local = (long) slot * CRASH_READ_LEN;
        if (killed) {
          issuedAfterKill++;
        }
        c.read(d, remoteOffset, dst, local, CRASH_READ_LEN).whenComplete((v, e) -> {
          if (e == null) {
            patternMismatch(PEER_SEED, remoteOffset, dst, local, CRASH_READ_LEN).ifPresent(wrongBytes::add);
            completed.incrementAndGet();
          } else {
            failures.add(TransportTestSupport.unwrap(e));
          }
          free.add(slot);
        });
      }
      eventually("every outstanding READ completes after the peer died", DEADLINE, () -> free.size() == SLOTS);

      assertTrue(wrongBytes.isEmpty(), () -> "READ completed with wrong bytes: " + wrongBytes.peek());
      List<String> unexpected = failures.stream()
          .filter(e -> !(e instanceof PeerClosedException))
          .map(TransportTestSupport::describe)
          .distinct()
          .toList();
      assertTrue(unexpected.isEmpty(), () -> "READs outstanding at the peer's death must fail with "
          + "PeerClosedException; also saw " + unexpected);

      eventually("the connection reports the peer gone", DEADLINE, () -> !c.isOpen());
      // Fail fast: well inside the deadline and nowhere near the I/O timeout.
      assertFailsWith(PeerClosedException.class, c.read(d, 0, dst, 0, 4096));
      assertFailsWith(PeerClosedException.class, c.request(message("hello?")));
      c.close();
      CompletableFuture<Connection> reconnect = client.connect(peer.address());
      Throwable e = TransportTestSupport.failureOf(reconnect);
      assertTrue(e instanceof TransportException, "connect to a dead peer: " + TransportTestSupport.describe(e));
    }

    // The dead peer could not clean up; the next transport that opens on its folder does, on a
    // thread of its own that outlives the transport.
    Transport successor = harness().open(MessageHandler.REJECT_ALL,
        options(TransportOption.SHM_DIR, peerShm.toString()));
    successor.close();
    eventually("the killed peer's files leave its shm folder once the next transport opened", DEADLINE,
        () -> TransportHarness.entries(peerShm).isEmpty());
  }
}
