package io.sluice.transport.region;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.crypto.PeerIdentities;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A key that its owner revoked is answered "revoked" from the moment {@link Region#close()}
 * begins, by every lookup, however the lookup and the close interleave: the table is shared by
 * every provider (tcp's READ frames, shm's OPEN requests, verbs' key requests), so this is where
 * the answer is decided for all of them.
 */
class RegionTableRevocationTest {
  /** Closes raced by a spinning reader; {@code -Dsluice.test.revocationRounds} changes it. */
  private static final int ROUNDS = Integer.getInteger("sluice.test.revocationRounds", 1_000);

  @Test
  void aLookupRacingTheCloseIsToldRevokedNeverUnknown() throws Exception {
    RegionTable table = new RegionTable();
    AtomicReference<String> problem = new AtomicReference<>();
    AtomicInteger racedLookups = new AtomicInteger();
    for (int round = 0; round < ROUNDS && problem.get() == null; round++) {
      long key = table.newKey();
      Region region = new Region(new RemoteDescriptor(1, 0, 64, key), Transport.ANY_PEER,
          ByteBuffer.allocateDirect(64), null, () -> table.revoke(key), () -> { }, new PeerIdentities());
      table.add(region);
      CountDownLatch spinning = new CountDownLatch(1);
      int thisRound = round;
      Thread reader = new Thread(() -> {
        int lookups = 0;
        while (true) {
          try {
            table.acquire(key, 7).release();
          } catch (RegionRevokedException e) {
            racedLookups.addAndGet(lookups);
            return;
          } catch (UnknownKeyException e) {
            problem.compareAndSet(null, "round " + thisRound + ": a lookup after " + lookups
                + " successful ones was told the key is unknown while its region was being closed");
            return;
          }
          if (++lookups == 16) {
            spinning.countDown();
          }
        }
      }, "revocation-race-reader");
      reader.start();
      assertTrue(spinning.await(20, TimeUnit.SECONDS), "the reader never looked the key up");
      region.close();
      reader.join(TimeUnit.SECONDS.toMillis(20));
      if (reader.isAlive()) {
        fail("round " + round + ": the reader still finds the key 20 s after its region was closed");
      }
    }
    if (problem.get() != null) {
      fail(problem.get());
    }
    assertTrue(racedLookups.get() >= ROUNDS * 16, "every round's reader looked the key up before the close");
  }

  @Test
  void aClosedRegionFoundStillLiveIsReportedRevoked() throws Exception {
    RegionTable table = new RegionTable();
    long key = table.newKey();
    // The close hook is held back, so the region is closed while its key is still in the table:
    // the moment inside close() between "no longer open" and "removed from the table".
    CountDownLatch hookEntered = new CountDownLatch(1);
    CountDownLatch hookMayGo = new CountDownLatch(1);
    Region region = new Region(new RemoteDescriptor(1, 0, 64, key), Transport.ANY_PEER, ByteBuffer.allocateDirect(64),
        null, () -> {
          hookEntered.countDown();
          try {
            hookMayGo.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          table.revoke(key);
        }, () -> { }, new PeerIdentities());
    table.add(region);
    Thread closer = new Thread(region::close, "revocation-closer");
    closer.start();
    assertTrue(hookEntered.await(20, TimeUnit.SECONDS));
    try {
      table.acquire(key, 7);
      fail("a closed region was handed out");
    } catch (RegionRevokedException expected) {
      // the answer for a key whose close has begun
    } finally {
      hookMayGo.countDown();
      closer.join(TimeUnit.SECONDS.toMillis(20));
    }
    try {
      table.acquire(key, 7);
      fail("a revoked key was handed out");
    } catch (RegionRevokedException expected) {
      assertEquals("region was revoked by its owner", expected.getMessage());
    }
  }
}
