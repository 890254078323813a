package io.sluice.transport.verbs.provider;

import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.verbs.config.VerbsKeys;
import io.sluice.transport.verbs.nativelib.DisniTask;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * In the lab (runs inside the DiSNI loader, started by VerbsIsolationOnDeviceTest): a READ queue
 * pair opened again posts no key on what the owner said before it. Reader B learns two keys of
 * owner A, A closes both regions, and a READ of the first kills B's queue pair (the device
 * refuses it). A READ of the second, whose answer B still holds from before, must ask A again and
 * fail as revoked without being posted: posted, the device would refuse it and kill the new queue
 * pair too, and with it every READ already retried once there. Argument: the address of the
 * RDMA device both transports bind.
 */
public final class ReopenedQueuePairCheck implements DisniTask {
  private static final int LEN = 64 * 1024;
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  public ReopenedQueuePairCheck() {}

  @Override
  public int run(List<String> args, PrintStream out) {
    try (TransportHarness harness = new TransportHarness("verbs",
        Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "30000", VerbsKeys.DEVICE_ADDRESS.key(), args.get(0)))) {
      check(harness.open(MessageHandler.REJECT_ALL), harness.open(MessageHandler.REJECT_ALL), out);
      return 0;
    } catch (Throwable t) {
      t.printStackTrace(out);
      return 1;
    }
  }

  private static void check(Transport a, Transport b, PrintStream out) throws Exception {
    try (RegisteredRegion live = a.allocate(LEN);
        RegisteredRegion first = a.allocate(LEN);
        RegisteredRegion second = a.allocate(LEN);
        RegisteredRegion landing = b.allocate(LEN)) {
      fillPattern(live, 21);
      Connection bToA = TransportHarness.connect(b, a);
      VerbsConnection connection = (VerbsConnection) bToA;
      for (RegisteredRegion r : List.of(live, first, second)) {
        await(bToA.read(r.descriptor(), 0, landing, 0, LEN));
      }
      first.close();
      second.close();

      RdmaQueuePair before = await(connection.readQueuePair(), DEADLINE);
      assertInstanceOf(RegionRevokedException.class, failureOf(bToA.read(first.descriptor(), 0, landing, 0, LEN)));
      assertTrue(!before.isOpen(), "the device's refusal of a revoked key left its queue pair open");
      RdmaQueuePair reopened = await(connection.readQueuePair(), DEADLINE);
      assertNotSame(before, reopened, "no new queue pair after the old one died");
      out.println("REOPEN: the device refused a READ of a revoked key and its queue pair died");

      Throwable stale = failureOf(bToA.read(second.descriptor(), 0, landing, 0, LEN));
      assertInstanceOf(RegionRevokedException.class, stale);
      assertTrue(reopened.isOpen(), "a READ posted with the answer from before the new queue pair killed it");
      assertSame(reopened, await(connection.readQueuePair(), DEADLINE));
      out.println("REOPEN: a READ of the other revoked key, answered before, asked again and failed without"
          + " being posted: " + TransportTestSupport.unwrap(stale).getMessage());

      await(bToA.read(live.descriptor(), 0, landing, 0, LEN));
      assertPattern(21, 0, landing, 0, LEN);
      assertSame(reopened, await(connection.readQueuePair(), DEADLINE));
    }
  }
}
