package io.sluice.transport;

import static io.sluice.transport.TransportTestSupport.DEADLINE;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.awaitAllDone;
import static io.sluice.transport.TransportTestSupport.failureIfAny;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static io.sluice.transport.TransportTestSupport.patternMismatch;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * READs that must fail, each with its own exception type: out of bounds, unknown key, revoked
 * region, and revocation racing with READs in flight. A failed READ never breaks the connection.
 */
public interface ReadFailureContract extends TransportContractFixture {
  long FAILURE_SEED = 77;

  @Test
  default void outOfBoundsReadsFail() throws Exception {
    int len = 65_536;
    try (ReadFixture setup = ReadFixture.open(harness(), len, len + 1, FAILURE_SEED)) {
      Connection c = setup.connection();
      RegisteredRegion dst = setup.dst();
      RemoteDescriptor d = setup.src().descriptor();
      long[][] cases = {
        {len - 10, 11},
        {len, 1},
        {len + 1, 0},
        {0, len + 1},
        {1L << 40, 1},
        {Integer.MAX_VALUE, 1},
        {0xFFFF_FFFFL, 1},
        {1L << 32, 16}, // wraps to a valid offset if truncated to 32 bits
        {Long.MAX_VALUE - 5, 100}, // offset + length overflows a long
        {Long.MAX_VALUE, 1},
        {Long.MAX_VALUE, 0},
      };
      for (long[] k : cases) {
        Throwable e = TransportTestSupport.failureOf(c.read(d, k[0], dst, 0, (int) k[1]));
        if (!(e instanceof ReadOutOfBoundsException)) {
          fail("READ offset " + k[0] + " length " + k[1] + " of a " + len + "-byte region: expected "
              + "ReadOutOfBoundsException, got " + TransportTestSupport.describe(e));
        }
      }
      // A descriptor that claims more than was registered does not widen access: the owner
      // checks against its live registration, not against what the reader says.
      RemoteDescriptor inflated = new RemoteDescriptor(d.node(), d.address(), 1L << 30, d.key());
      assertFailsWith(ReadOutOfBoundsException.class, c.read(inflated, len - 100, dst, 0, 101));
      assertFailsWith(ReadOutOfBoundsException.class, c.read(inflated, 1 << 20, dst, 0, 100));

      assertTrue(c.isOpen(), "a refused READ must not close the connection");
      await(c.read(d, 0, dst, 0, len));
      assertPattern(FAILURE_SEED, 0, dst, 0, len);
    }
  }

  @Test
  default void unknownKeysFail() throws Exception {
    try (ReadFixture setup = ReadFixture.open(harness(), 8192, 8192, FAILURE_SEED);
        RegisteredRegion elsewhere = harness().open(MessageHandler.REJECT_ALL).allocate(8192)) {
      Connection c = setup.connection();
      RegisteredRegion dst = setup.dst();
      RemoteDescriptor d = setup.src().descriptor();
      for (long flip : new long[] {1L, 1L << 63, 0xFFFF_FFFFL, -1L}) {
        RemoteDescriptor forged = new RemoteDescriptor(d.node(), d.address(), d.length(), d.key() ^ flip);
        assertFailsWith(UnknownKeyException.class, c.read(forged, 0, dst, 0, 100));
      }
      RemoteDescriptor zeroKey = new RemoteDescriptor(d.node(), d.address(), d.length(), 0L);
      assertFailsWith(UnknownKeyException.class, c.read(zeroKey, 0, dst, 0, 100));
      // A live region of another node is unknown to this peer.
      assertFailsWith(UnknownKeyException.class, c.read(elsewhere.descriptor(), 0, dst, 0, 100));

      assertTrue(c.isOpen(), "a refused READ must not close the connection");
      await(c.read(d, 0, dst, 0, 8192));
      assertPattern(FAILURE_SEED, 0, dst, 0, 8192);
    }
  }

  @Test
  default void readOfClosedRegionFailsAsRevoked() throws Exception {
    Transport server = harness().open(MessageHandler.REJECT_ALL);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion keep = server.allocate(4096);
        RegisteredRegion dst = client.allocate(8192);
        Connection c = TransportHarness.connect(client, server)) {
      RegisteredRegion src = server.allocate(8192);
      fillPattern(src, FAILURE_SEED);
      RemoteDescriptor d = src.descriptor();
      await(c.read(d, 0, dst, 0, 8192));
      src.close();
      assertFailsWith(RegionRevokedException.class, c.read(d, 0, dst, 0, 8192));
      assertFailsWith(RegionRevokedException.class, c.read(d, 100, dst, 0, 1));
      assertFailsWith(RegionRevokedException.class, c.read(d, 0, dst, 0, 0));

      // Closing revokes even while another reference keeps the memory alive.
      RegisteredRegion held = server.allocate(4096);
      held.retain();
      held.close();
      assertFailsWith(RegionRevokedException.class, c.read(held.descriptor(), 0, dst, 0, 4096));
      assertTrue(held.release());

      assertTrue(c.isOpen());
      fillPattern(keep, FAILURE_SEED + 1);
      await(c.read(keep.descriptor(), 0, dst, 0, 4096));
      assertPattern(FAILURE_SEED + 1, 0, dst, 0, 4096);
    }
  }

  @Test
  default void regionClosedWhileReadsAreInFlight() throws Exception {
    Transport server = harness().open(MessageHandler.REJECT_ALL);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    int srcLen = 4 << 20;
    int readLen = 128 * 1024;
    int inFlight = 96;
    try (RegisteredRegion dst = client.allocate(inFlight * readLen);
        Connection c = TransportHarness.connect(client, server)) {
      RegisteredRegion src = server.allocate(srcLen);
      fillPattern(src, FAILURE_SEED);
      RemoteDescriptor d = src.descriptor();
      await(c.read(d, 0, dst, 0, 1)); // connection warm, region known to be readable
      List<CompletableFuture<Void>> before = new ArrayList<>();
      long[] remote = new long[inFlight];
      for (int i = 0; i < inFlight; i++) {
        remote[i] = (long) (i * 7919 % (srcLen / readLen - 1)) * readLen + (i % 13);
        before.add(c.read(d, remote[i], dst, (long) i * readLen, readLen));
      }
      src.close();
      List<CompletableFuture<Void>> after = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        after.add(c.read(d, (long) i * 1000, dst, (long) i * readLen, 1000));
      }

      awaitAllDone(before, DEADLINE);
      awaitAllDone(after, DEADLINE);
      List<String> problems = new ArrayList<>();
      int completed = 0;
      for (int i = 0; i < inFlight; i++) {
        Optional<Throwable> failure = failureIfAny(before.get(i));
        if (failure.isEmpty()) {
          completed++;
          patternMismatch(FAILURE_SEED, remote[i], dst, (long) i * readLen, readLen)
              .ifPresent(m -> problems.add("completed READ has wrong bytes: " + m));
        } else if (!(failure.get() instanceof RegionRevokedException)) {
          problems.add("in-flight READ " + i + ": " + TransportTestSupport.describe(failure.get()));
        }
      }
      for (int i = 0; i < after.size(); i++) {
        Optional<Throwable> failure = failureIfAny(after.get(i));
        if (failure.isEmpty() || !(failure.get() instanceof RegionRevokedException)) {
          problems.add("READ issued after close " + i + ": expected RegionRevokedException, got "
              + failure.map(TransportTestSupport::describe).orElse("success"));
        }
      }
      int done = completed;
      assertTrue(problems.isEmpty(), () -> problems.size() + " problems (" + done + " of " + inFlight
          + " in-flight READs completed), first: " + problems.get(0));
      assertTrue(c.isOpen(), "revocation must not close the connection");
    }
  }

  /**
   * The close of a region raced by a steady stream of READs of it, many times over one
   * connection: every READ that fails, fails as revoked, from the moment the close begins; not
   * one is told its key is unknown. {@code -Dsluice.contract.revocationRounds} sets the count.
   */
  @Test
  default void aRevokedKeyIsNeverAnsweredAsUnknown() throws Exception {
    assumeTrue(repeatedRevocationRaces(), "a reader racing revocations again and again is barred on " + provider());
    int rounds = Integer.getInteger("sluice.contract.revocationRounds", 1_000);
    int inFlight = 24;
    int readLen = 512;
    Transport server = harness().open(MessageHandler.REJECT_ALL);
    Transport client = harness().open(MessageHandler.REJECT_ALL);
    try (RegisteredRegion dst = client.allocate(inFlight * readLen);
        Connection c = TransportHarness.connect(client, server)) {
      int revoked = 0;
      for (int round = 0; round < rounds; round++) {
        RegisteredRegion src = server.allocate(inFlight * readLen);
        RemoteDescriptor d = src.descriptor();
        await(c.read(d, 0, dst, 0, 1));
        List<CompletableFuture<Void>> reads = new ArrayList<>(inFlight);
        for (int i = 0; i < inFlight; i++) {
          reads.add(c.read(d, (long) i * readLen, dst, (long) i * readLen, readLen));
          if (i == inFlight / 2) {
            src.close();
          }
        }
        awaitAllDone(reads, DEADLINE);
        for (int i = 0; i < inFlight; i++) {
          Optional<Throwable> failure = failureIfAny(reads.get(i));
          if (failure.isPresent() && !(failure.get() instanceof RegionRevokedException)) {
            fail("round " + round + ", READ " + i + " of " + inFlight + " (close after READ " + inFlight / 2
                + "): expected success or RegionRevokedException, got "
                + TransportTestSupport.describe(failure.get()));
          }
          if (failure.isPresent()) {
            revoked++;
          }
        }
        assertFailsWith(RegionRevokedException.class, c.read(d, 0, dst, 0, 1));
      }
      assertTrue(revoked >= rounds * (inFlight / 2 - 1), "the READs issued after each close failed as revoked ("
          + revoked + " revoked in " + rounds + " rounds)");
      assertTrue(c.isOpen(), "revocation must not close the connection");
    }
  }

  /**
   * READs of 1 B to 1 MiB from eight threads into destinations filled with 0xA5, while one
   * region on each of two peers is closed and a third peer closes, at seeded moments of the
   * issuing. A READ completes with exactly the right bytes at the moment it completes (a READ
   * completed before its bytes landed still shows 0xA5), or fails with the error of what was
   * closed under it: {@link RegionRevokedException} for its region, {@link PeerClosedException}
   * (or the revocation the peer's close implies) for its peer. Nothing else fails, nothing
   * waits for a timeout, and no destination byte ever holds anything but 0xA5 or the right
   * pattern byte (a failed READ may have placed part of its range), unless a failed READ's whole
   * range is zeros (a carrier READ that fails once its bytes landed zeroes its range).
   */
  @Test
  @Tag(TransportTestSupport.READ_STRESS)
  default void readsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause() throws Exception {
    raceReadsAgainstCloses(0x51C3_0002L, 40, 20, 40);
  }

  /**
   * As {@link #readsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause}, with READs of 1 B to
   * 4 KiB (short ones across page boundaries among them), each thread keeping at most 64 in
   * flight: 4,000 READs, or {@code -Dsluice.contract.stressReads} (the lab runs 100,000 on each
   * device, enough to show a fault that comes once in a hundred thousand READs). Its deadline is
   * the suite's two minutes times five: the lab's 100,000 READs take half a minute on an emulated
   * device on a quiet machine and past two minutes where the emulation runs three times slower.
   */
  @Test
  @Tag(TransportTestSupport.READ_STRESS)
  @Timeout(600)
  default void manySmallReadsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause() throws Exception {
    int reads = Integer.getInteger("sluice.contract.stressReads", 4000);
    raceReadsAgainstCloses(0x51C3_0003L, Math.max(1, reads / 8), 12, 64);
  }

  /**
   * Eight threads issue {@code perThread} READs each, of 1 B to 2^{@code maxLengthLog2} B (log
   * uniform), each thread with at most {@code window} in flight, while two regions and a peer
   * close under them; see {@link #readsRacingRegionAndPeerClosesLandWholeOrFailWithTheirCause}.
   */
  private void raceReadsAgainstCloses(long seed, int perThread, int maxLengthLog2, int window) throws Exception {
    record Planned(int peer, int region, long remote, int length, long local) {}
    Random plan = new Random(seed);
    int peers = 3;
    int regionsPerPeer = 3;
    int threads = 8;
    int regionLen = (1 << 20) + 4099;
    byte fill = (byte) 0xA5;
    int closedRegionPeer0 = plan.nextInt(regionsPerPeer);
    int closedRegionPeer1 = plan.nextInt(regionsPerPeer);
    int closingPeer = 2;
    int total = threads * perThread;
    // Issued-READ counts at which the three closes happen, in order, within the middle of the run.
    int[] closeAt = {total / 8 + plan.nextInt(total / 4), total / 3 + plan.nextInt(total / 4),
        total / 2 + plan.nextInt(total / 4)};

    List<List<Planned>> work = new ArrayList<>();
    long[] destinationLength = new long[threads];
    for (int t = 0; t < threads; t++) {
      List<Planned> mine = new ArrayList<>();
      long local = 0;
      for (int i = 0; i < perThread; i++) {
        int length = (int) Math.max(1, Math.min(1 << maxLengthLog2,
            Math.round(Math.pow(2, plan.nextDouble() * maxLengthLog2))));
        int peer = plan.nextInt(peers);
        int region = plan.nextInt(regionsPerPeer);
        long remote = plan.nextInt(regionLen - length + 1);
        mine.add(new Planned(peer, region, remote, length, local));
        local += length;
      }
      work.add(mine);
      destinationLength[t] = local;
    }

    Transport client = harness().open(MessageHandler.REJECT_ALL);
    Transport[] servers = new Transport[peers];
    RegisteredRegion[][] sources = new RegisteredRegion[peers][regionsPerPeer];
    Connection[] connections = new Connection[peers];
    RegisteredRegion[] destinations = new RegisteredRegion[threads];
    try {
      for (int p = 0; p < peers; p++) {
        servers[p] = harness().open(MessageHandler.REJECT_ALL);
        for (int r = 0; r < regionsPerPeer; r++) {
          sources[p][r] = servers[p].allocate(regionLen);
          fillPattern(sources[p][r], FAILURE_SEED + p * regionsPerPeer + r);
        }
        connections[p] = TransportHarness.connect(client, servers[p]);
      }
      for (int t = 0; t < threads; t++) {
        destinations[t] = client.allocate(Math.toIntExact(destinationLength[t]));
        byte[] pattern = new byte[Math.toIntExact(destinationLength[t])];
        Arrays.fill(pattern, fill);
        TransportTestSupport.fill(destinations[t], 0, pattern);
      }
      // Every key is known and every connection warm: READs after a close use what they learned before.
      for (int p = 0; p < peers; p++) {
        for (int r = 0; r < regionsPerPeer; r++) {
          await(connections[p].read(sources[p][r].descriptor(), 0, destinations[0], 0, 1));
        }
      }
      TransportTestSupport.fill(destinations[0], 0, new byte[] {fill});

      AtomicInteger issued = new AtomicInteger();
      ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<Void>> all = Collections.synchronizedList(new ArrayList<>());
      List<Planned> issuedPlans = Collections.synchronizedList(new ArrayList<>());
      List<Integer> issuedThreads = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch start = new CountDownLatch(1);
      RemoteDescriptor[][] descriptors = new RemoteDescriptor[peers][regionsPerPeer];
      for (int p = 0; p < peers; p++) {
        for (int r = 0; r < regionsPerPeer; r++) {
          descriptors[p][r] = sources[p][r].descriptor();
        }
      }
      // The issuing threads wait on their own READs: allow each READ a few milliseconds beyond the deadline.
      long issuing = DEADLINE.toMillis() + 5L * total;
      Thread closer = new Thread(() -> {
        Runnable[] closes = {() -> sources[0][closedRegionPeer0].close(),
            () -> sources[1][closedRegionPeer1].close(), () -> servers[closingPeer].close()};
        try {
          // Polled this finely (not at Eventually's pace) so each close lands at its seeded count.
          long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(issuing);
          for (int k = 0; k < closes.length; k++) {
            while (issued.get() < closeAt[k]) {
              if (System.nanoTime() - giveUp > 0) {
                problems.add("close " + k + " never came: " + issued.get() + " of the " + closeAt[k]
                    + " READs before it were issued");
                return;
              }
              Thread.sleep(0, 200_000);
            }
            closes[k].run();
          }
        } catch (RuntimeException | InterruptedException e) {
          problems.add("closing failed: " + e);
        }
      }, "contract-closer");
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int id = t;
        Thread w = new Thread(() -> {
          try {
            if (!start.await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
              throw new IllegalStateException("never started");
            }
            java.util.ArrayDeque<CompletableFuture<Void>> inFlight = new java.util.ArrayDeque<>();
            for (Planned r : work.get(id)) {
              if (inFlight.size() == window) {
                awaitAllDone(List.of(inFlight.poll()), DEADLINE);
              }
              long patternSeed = FAILURE_SEED + r.peer() * regionsPerPeer + r.region();
              CompletableFuture<Void> f = connections[r.peer()].read(descriptors[r.peer()][r.region()], r.remote(),
                  destinations[id], r.local(), r.length());
              // Checked when it completes: a READ completed before its bytes landed shows 0xA5 here.
              CompletableFuture<Void> checked = f.whenComplete((v, e) -> {
                if (e == null) {
                  patternMismatch(patternSeed, r.remote(), destinations[id], r.local(), r.length())
                      .ifPresent(m -> problems.add("READ completed with wrong bytes: " + m + wrongBytes(
                          destinations[id], r.local(), r.length(), patternSeed, r.remote(), peers * regionsPerPeer,
                          regionLen)));
                }
              });
              inFlight.add(checked);
              synchronized (all) {
                all.add(checked);
                issuedPlans.add(r);
                issuedThreads.add(id);
              }
              issued.incrementAndGet();
            }
          } catch (RuntimeException | InterruptedException e) {
            problems.add("issuing thread failed: " + e);
          }
        }, "contract-reader-" + t);
        workers.add(w);
        w.start();
      }
      closer.start();
      start.countDown();
      for (Thread w : workers) {
        w.join(issuing);
        assertTrue(!w.isAlive(), "issuing thread did not finish");
      }
      closer.join(DEADLINE.toMillis());
      assertTrue(!closer.isAlive(), "the closing thread did not finish");
      awaitAllDone(all, DEADLINE);

      int succeeded = 0;
      for (int i = 0; i < all.size(); i++) {
        Planned r = issuedPlans.get(i);
        RegisteredRegion dst = destinations[issuedThreads.get(i)];
        long patternSeed = FAILURE_SEED + r.peer() * regionsPerPeer + r.region();
        Optional<Throwable> failure = failureIfAny(all.get(i));
        boolean regionClosed = (r.peer() == 0 && r.region() == closedRegionPeer0)
            || (r.peer() == 1 && r.region() == closedRegionPeer1);
        if (failure.isEmpty()) {
          succeeded++;
          // Checked again now: nothing landed in it after it completed.
          patternMismatch(patternSeed, r.remote(), dst, r.local(), r.length())
              .ifPresent(m -> problems.add("bytes changed after the READ completed: " + m));
          continue;
        }
        Throwable e = failure.get();
        boolean expected = r.peer() == closingPeer
            ? e instanceof PeerClosedException || e instanceof RegionRevokedException
            : regionClosed && e instanceof RegionRevokedException;
        if (!expected) {
          problems.add("READ of " + (regionClosed ? "a closed region" : r.peer() == closingPeer
              ? "a closed peer" : "a region nobody closed") + " failed: " + TransportTestSupport.describe(e));
        }
        ByteBuffer b = dst.buffer();
        int foreignAt = -1;
        boolean zeroed = true;
        for (int k = 0; k < r.length(); k++) {
          byte got = b.get(Math.toIntExact(r.local() + k));
          zeroed &= got == 0;
          if (foreignAt < 0 && got != fill && got != TransportTestSupport.patternByte(patternSeed, r.remote() + k)) {
            foreignAt = k;
          }
        }
        if (foreignAt >= 0 && !zeroed) {
          problems.add(String.format("a failed READ left a foreign byte %02x at byte %d of its %d-byte range",
              b.get(Math.toIntExact(r.local() + foreignAt)) & 0xff, foreignAt, r.length()));
        }
      }
      int ok = succeeded;
      assertTrue(problems.isEmpty(), () -> problems.size() + " problems (" + ok + " of " + total
          + " READs completed), first: " + problems.peek());
      assertTrue(connections[0].isOpen() && connections[1].isOpen(), "closing a region must not close the connection");
    } finally {
      for (Connection c : connections) {
        if (c != null) {
          c.close();
        }
      }
      for (RegisteredRegion d : destinations) {
        if (d != null) {
          d.close();
        }
      }
      for (RegisteredRegion[] perPeer : sources) {
        for (RegisteredRegion r : perPeer) {
          if (r != null) {
            r.close();
          }
        }
      }
    }
  }

  /**
   * For a failure message: where a READ's wrong bytes came from, from its first wrong byte on
   * (the sources hold patterns {@code FAILURE_SEED} to {@code FAILURE_SEED + sources - 1}).
   */
  private static String wrongBytes(RegisteredRegion dst, long local, int length, long seed, long remote, int sources,
      long sourceLength) {
    ByteBuffer b = dst.buffer();
    int first = 0;
    while (first < length && b.get(Math.toIntExact(local + first)) == TransportTestSupport.patternByte(seed, remote + first)) {
      first++;
    }
    long[] seeds = new long[sources];
    for (int i = 0; i < sources; i++) {
      seeds[i] = FAILURE_SEED + i;
    }
    return "; from byte " + first + " on, " + TransportTestSupport.originOf(dst, local + first, length - first, seeds,
        sourceLength) + " (this READ's own source: pattern " + seed + " at " + (remote + first) + ")";
  }
}
