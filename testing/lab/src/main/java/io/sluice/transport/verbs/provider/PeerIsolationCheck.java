package io.sluice.transport.verbs.provider;

import io.sluice.transport.verbs.config.VerbsKeys;
import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.eventually;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.verbs.nativelib.DisniTask;
import io.sluice.transport.verbs.rc.DeviceQuery;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * In the lab (runs inside the DiSNI loader, started by VerbsIsolationOnDeviceTest): the device,
 * not only the key table, keeps peers apart. Owner A shows a region to C only; B, authenticated
 * too, takes C's rkey and address (as if it had stolen C's descriptor and key answer) and posts
 * READs on its own queue pair, skipping every software check: the device refuses them, nothing
 * lands, and C's READs go on. Guessing nearby rkeys gets B nothing either, and after
 * {@link PeerFaults#LIMIT} refused READs A no longer admits B's queue pairs. A grant withdrawn
 * from C is withdrawn in the device too: C's READ through the rkey it was given fails.
 * Argument: the address of the RDMA device all three transports bind. On iWARP the bar is not
 * checked (the device reports no queue pair state, from which the owner counts faults); the
 * check says so in its report.
 */
public final class PeerIsolationCheck implements DisniTask {
  static final int LEN = 64 * 1024;
  static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final MessageHandler ECHO = (peer, request) -> CompletableFuture.completedFuture(request);

  public PeerIsolationCheck() {}

  @Override
  public int run(List<String> args, PrintStream out) {
    try (TransportHarness harness = new TransportHarness("verbs",
        Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "30000", VerbsKeys.DEVICE_ADDRESS.key(), args.get(0)))) {
      Transport a = harness.open(ECHO);
      Transport b = harness.open(ECHO);
      Transport c = harness.open(ECHO);
      check(a, b, c, out);
      return 0;
    } catch (Throwable t) {
      t.printStackTrace(out);
      return 1;
    }
  }

  private static void check(Transport a, Transport b, Transport c, PrintStream out) throws Exception {
    try (RegisteredRegion forC = a.allocateFor(c.nodeId(), LEN);
        RegisteredRegion granted = a.allocateFor(Transport.GRANTED_ONLY, LEN);
        RegisteredRegion landingB = b.allocate(LEN);
        RegisteredRegion landingC = c.allocate(LEN)) {
      fillPattern(forC, 11);
      fillPattern(granted, 12);
      Connection cToA = TransportHarness.connect(c, a);
      Connection bToA = TransportHarness.connect(b, a);
      await(cToA.read(forC.descriptor(), 0, landingC, 0, LEN));
      assertPattern(11, 0, landingC, 0, LEN);

      // B with C's descriptor through the API: the key table says no.
      assertInstanceOf(UnknownKeyException.class, failureOf(bToA.read(forC.descriptor(), 0, landingB, 0, LEN)));

      // B with C's rkey and address, straight onto its queue pair: the device says no.
      SetupMessages.KeyInfo stolen = await(((VerbsConnection) cToA).keys().lookup(forC.descriptor().key()));
      assertTrue(rawReadFails(b, bToA, stolen.address(), stolen.rkey(), landingB),
          "B read C's region through C's rkey");
      out.println("ISOLATION: B's READ with C's rkey " + Integer.toHexString(stolen.rkey()) + " was refused by the device");
      await(cToA.read(forC.descriptor(), 0, landingC, 0, LEN));
      assertPattern(11, 0, landingC, 0, LEN);

      // A grant withdrawn is withdrawn in the device: C's rkey for that region stops working.
      ReaderGrant grant = granted.allowReader(c.nodeId());
      await(cToA.read(granted.descriptor(), 0, landingC, 0, LEN));
      assertPattern(12, 0, landingC, 0, LEN);
      SetupMessages.KeyInfo given = await(((VerbsConnection) cToA).keys().lookup(granted.descriptor().key()));
      grant.close();
      assertTrue(rawReadFails(c, cToA, given.address(), given.rkey(), landingC),
          "C still read a region after its grant was withdrawn");
      out.println("ISOLATION: C's READ after its grant was withdrawn was refused by the device");
      await(cToA.read(forC.descriptor(), 0, landingC, 0, LEN));
      assertPattern(11, 0, landingC, 0, LEN);

      // B guesses rkeys near C's: nothing, and then no more queue pairs.
      VerbsTransport owner = (VerbsTransport) a;
      int guesses = 0;
      for (int delta = 1; delta <= PeerFaults.LIMIT + 1 && !owner.barred(b.nodeId()); delta++) {
        int guess = stolen.rkey() + (delta % 2 == 0 ? delta / 2 : -(delta + 1) / 2);
        // A counts B's faults on its own threads: the bar may come between the check above and
        // B asking for a new queue pair, which A then refuses. That is the outcome sought.
        CompletableFuture<RdmaQueuePair> qp = ((VerbsConnection) bToA).readQueuePair();
        Throwable noQueuePair = failureOrNull(qp);
        if (noQueuePair != null) {
          assertTrue(owner.barred(b.nodeId()), "B got no queue pair without being barred: " + noQueuePair);
          break;
        }
        assertTrue(rawReadFails(b, bToA, stolen.address(), guess, landingB), "B read a region with a guessed rkey");
        guesses++;
      }
      out.println("ISOLATION: " + guesses + " guessed rkeys near C's read nothing");
      if (owner.node().device().fabric() == DeviceQuery.Fabric.IWARP) {
        // The owner counts a peer's fault from the state of the queue pair the peer broke; siw
        // (soft-iWARP) does not report a queue pair's state, so no fault is seen and no bar comes.
        out.println("ISOLATION: on iWARP (" + owner.node().device().name() + ") the bar after refused READs is not"
            + " checked: the device reports no queue pair state to count faults by");
        await(cToA.read(forC.descriptor(), 0, landingC, 0, LEN));
        assertPattern(11, 0, landingC, 0, LEN);
        return;
      }
      eventually("A bars B after more than " + PeerFaults.LIMIT + " refused READs", DEADLINE,
          () -> owner.barred(b.nodeId()));
      Throwable refused = failureOf(((VerbsConnection) bToA).readQueuePair(), DEADLINE);
      assertInstanceOf(TransportException.class, TransportTestSupport.unwrap(refused));
      out.println("ISOLATION: A no longer admits B's queue pairs: " + TransportTestSupport.unwrap(refused).getMessage());
      assertTrue(!owner.barred(c.nodeId()), "C was barred");
      await(cToA.read(forC.descriptor(), 0, landingC, 0, LEN));
      assertPattern(11, 0, landingC, 0, LEN);
    }
  }

  /** The failure of a future that ends within the deadline, or null if it succeeded. */
  private static Throwable failureOrNull(CompletableFuture<?> future) {
    try {
      future.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
      return null;
    } catch (ExecutionException e) {
      return TransportTestSupport.unwrap(e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError("no answer within " + DEADLINE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * Posts one READ of {@code rkey} at {@code address} on the connection's READ queue pair,
   * bypassing every check; true if it failed and left the landing region untouched. Reads the
   * first {@value #LEN} bytes of the landing region.
   */
  static boolean rawReadFails(Transport reader, Connection connection, long address, int rkey,
      RegisteredRegion landing) {
    byte[] zeros = new byte[LEN];
    TransportTestSupport.fill(landing, 0, zeros);
    RdmaQueuePair qp = await(((VerbsConnection) connection).readQueuePair(), DEADLINE);
    Registration local = ((VerbsTransport) reader).destination(landing).orElseThrow();
    CompletableFuture<Void> read = qp.readBatch(List.of(
        new RdmaRead(address, rkey, local.mr().address(), local.mr().lkey(), LEN))).get(0);
    boolean failed = failureOf(read, DEADLINE) != null;
    assertArrayEquals(zeros, TransportTestSupport.bytesOf(landing, 0, LEN), "a refused READ wrote its destination");
    return failed;
  }
}
