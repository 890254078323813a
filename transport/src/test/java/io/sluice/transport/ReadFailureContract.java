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

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

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
}
