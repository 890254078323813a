package io.sluice.transport.verbs.provider;

import static io.sluice.transport.TransportTestSupport.assertPattern;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.failureOf;
import static io.sluice.transport.TransportTestSupport.fillPattern;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.verbs.config.VerbsKeys;
import io.sluice.transport.verbs.nativelib.DisniTask;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * In the lab (runs inside the DiSNI loader, started by VerbsIsolationOnDeviceTest): with
 * {@code verbs.readDomains=shared}, a region every peer may read is registered for peers once,
 * however many peers READ it, and the kernel counts its pages as pinned once; with {@code
 * per-peer} once per reading peer. Both are measured on the device ({@code VmPin} of this
 * process around two peers' first READs) and printed side by side. On the shared domain it then
 * checks what is kept: a region restricted to one peer, or to granted peers, is served to none
 * (a clear error to the allowed peer, an unknown key to the others); a revoked region's rkey is
 * refused by the device; staged messages, which live in each peer's own domain, still pass.
 * Argument: the address of the RDMA device the transports bind.
 */
public final class SharedReadDomainCheck implements DisniTask {
  private static final int REGION_BYTES = 16 << 20;
  private static final MessageHandler ECHO = (peer, request) -> CompletableFuture.completedFuture(request);

  public SharedReadDomainCheck() {}

  @Override
  public int run(List<String> args, PrintStream out) {
    try {
      long perPeer = pinnedByTwoReaders(args.get(0), VerbsKeys.PER_PEER, out);
      long shared = pinnedByTwoReaders(args.get(0), VerbsKeys.SHARED, out);
      out.println("SHARED-DOMAIN: two peers READ a region of " + (REGION_BYTES >> 10) + " KiB: VmPin grew "
          + perPeer + " KiB with per-peer domains, " + shared + " KiB with one shared domain");
      // The kernel counts a registration's pages when it pins them: twice for two peers' domains,
      // once for the shared one. A quarter of the region is left for what else pins meanwhile.
      assertTrue(perPeer >= 2L * (REGION_BYTES >> 10) - (REGION_BYTES >> 12), "per-peer pinned " + perPeer + " KiB");
      assertTrue(shared < (REGION_BYTES >> 10) + (REGION_BYTES >> 12), "shared pinned " + shared + " KiB");
      try (TransportHarness harness = harness(args.get(0), VerbsKeys.SHARED)) {
        checkWhatIsKept(harness.open(ECHO), harness.open(ECHO), harness.open(ECHO), out);
      }
      return 0;
    } catch (Throwable t) {
      t.printStackTrace(out);
      return 1;
    }
  }

  private static TransportHarness harness(String device, String readDomains) {
    return new TransportHarness("verbs", Map.of(TransportOption.CONNECT_TIMEOUT_MS.key(), "30000",
        VerbsKeys.DEVICE_ADDRESS.key(), device, VerbsKeys.READ_DOMAINS.key(), readDomains));
  }

  /**
   * How many KiB this process's pinned count grew while two peers first READ one region of A's
   * (connections and landing buffers set up before), after checking the bytes and where A
   * registered the region for them.
   */
  private static long pinnedByTwoReaders(String device, String readDomains, PrintStream out) throws Exception {
    try (TransportHarness harness = harness(device, readDomains)) {
      Transport a = harness.open(ECHO);
      Transport b = harness.open(ECHO);
      Transport c = harness.open(ECHO);
      VerbsTransport owner = (VerbsTransport) a;
      try (RegisteredRegion region = a.allocate(REGION_BYTES);
          RegisteredRegion landingB = b.allocate(REGION_BYTES);
          RegisteredRegion landingC = c.allocate(REGION_BYTES)) {
        fillPattern(region, 21);
        Connection bToA = TransportHarness.connect(b, a);
        Connection cToA = TransportHarness.connect(c, a);
        long before = pinnedKib();
        await(bToA.read(region.descriptor(), 0, landingB, 0, REGION_BYTES));
        await(cToA.read(region.descriptor(), 0, landingC, 0, REGION_BYTES));
        long grew = pinnedKib() - before;
        assertPattern(21, 0, landingB, 0, REGION_BYTES);
        assertPattern(21, 0, landingC, 0, REGION_BYTES);
        long key = region.descriptor().key();
        int rkeyB = await(((VerbsConnection) bToA).keys().lookup(key)).rkey();
        int rkeyC = await(((VerbsConnection) cToA).keys().lookup(key)).rkey();
        if (VerbsKeys.SHARED.equals(readDomains)) {
          assertEquals(0, owner.peerRegistrations(key));
          assertTrue(owner.sharedRegistration(key), "not registered in the shared domain");
          assertEquals(rkeyB, rkeyC, "two peers were given different rkeys for one shared registration");
        } else {
          assertEquals(2, owner.peerRegistrations(key));
          assertTrue(!owner.sharedRegistration(key), "registered in a shared domain under per-peer");
          assertTrue(rkeyB != rkeyC, "two peers were given one rkey under per-peer domains");
        }
        out.println("SHARED-DOMAIN: readDomains=" + readDomains + ": " + owner.peerRegistrations(key)
            + " per-peer registrations, shared " + owner.sharedRegistration(key) + ", rkeys "
            + Integer.toHexString(rkeyB) + " and " + Integer.toHexString(rkeyC));
        return grew;
      }
    }
  }

  private static void checkWhatIsKept(Transport a, Transport b, Transport c, PrintStream out) throws Exception {
    int len = PeerIsolationCheck.LEN;
    try (RegisteredRegion everyone = a.allocate(len);
        RegisteredRegion forC = a.allocateFor(c.nodeId(), len);
        RegisteredRegion granted = a.allocateFor(Transport.GRANTED_ONLY, len);
        RegisteredRegion landingB = b.allocate(len);
        RegisteredRegion landingC = c.allocate(len)) {
      fillPattern(everyone, 31);
      fillPattern(forC, 32);
      fillPattern(granted, 33);
      Connection bToA = TransportHarness.connect(b, a);
      Connection cToA = TransportHarness.connect(c, a);

      // A region restricted to C: C is told why, B that no such key exists; neither READs it.
      Throwable toC = failureOf(cToA.read(forC.descriptor(), 0, landingC, 0, len));
      assertInstanceOf(TransportException.class, toC);
      assertTrue(String.valueOf(toC.getMessage()).contains("readDomains=shared"), toC.toString());
      assertInstanceOf(UnknownKeyException.class, failureOf(bToA.read(forC.descriptor(), 0, landingB, 0, len)));
      try (ReaderGrant grant = granted.allowReader(c.nodeId())) {
        Throwable grantedToC = failureOf(cToA.read(granted.descriptor(), 0, landingC, 0, len));
        assertTrue(String.valueOf(grantedToC.getMessage()).contains("readDomains=shared"), grantedToC.toString());
      }
      assertEquals(0, ((VerbsTransport) a).peerRegistrations(forC.descriptor().key()));
      assertTrue(!((VerbsTransport) a).sharedRegistration(forC.descriptor().key()), "a restricted region was shared");
      out.println("SHARED-DOMAIN: regions restricted to some peers are served to none: " + toC.getMessage());

      // Every peer READs the region for everyone; staged messages (larger than one SEND) pass both ways.
      await(bToA.read(everyone.descriptor(), 0, landingB, 0, len));
      await(cToA.read(everyone.descriptor(), 0, landingC, 0, len));
      assertPattern(31, 0, landingB, 0, len);
      assertPattern(31, 0, landingC, 0, len);
      byte[] large = TransportTestSupport.randomBytes(new java.util.Random(7), 32 * 1024);
      assertArrayEquals(large, TransportTestSupport.bytes(await(bToA.request(ByteBuffer.wrap(large)))));

      // Revoked: the API says so, and the device refuses the rkey the peers were given.
      SetupMessages.KeyInfo given = await(((VerbsConnection) bToA).keys().lookup(everyone.descriptor().key()));
      everyone.close();
      assertInstanceOf(RegionRevokedException.class, failureOf(cToA.read(everyone.descriptor(), 0, landingC, 0, len)));
      assertTrue(PeerIsolationCheck.rawReadFails(b, bToA, given.address(), given.rkey(), landingB),
          "B read a revoked region through the shared rkey");
      out.println("SHARED-DOMAIN: a revoked region's shared rkey " + Integer.toHexString(given.rkey())
          + " was refused by the device; staged messages of 32 KiB passed");
    }
  }

  /** This process's pinned memory as the kernel counts it ({@code VmPin}), in KiB. */
  private static long pinnedKib() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmPin:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException("no VmPin line in /proc/self/status");
  }
}
