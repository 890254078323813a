package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device keeps peers apart (PeerIsolationCheck), peers that share one READ domain pin a
 * region once and reach no restricted one (SharedReadDomainCheck), and connections leave nothing behind
 * (NodeLifecycleCheck), and a queue pair opened again posts no key on an old answer
 * (ReopenedQueuePairCheck), and what the device lands for short READs across a page boundary
 * (ShortReadCheck); all run inside the DiSNI loader. Needs an RDMA device and its IP
 * address in {@code -Dsluice.rdma.address=...} (the SoftRoCE lab); skipped otherwise. Their
 * report lines go to standard output with the lab's marker, so the lab's log keeps them.
 */
@Timeout(300)
class VerbsIsolationOnDeviceTest {
  private String address;
  private DisniRuntime runtime;

  @BeforeEach
  void device() {
    address = System.getProperty("sluice.rdma.address", "");
    assumeTrue(!address.isEmpty(), "set -Dsluice.rdma.address to an address of an RDMA device");
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    runtime = DisniRuntime.get();
    assumeTrue(runtime.deviceCount() > 0, "no RDMA device");
  }

  @Test
  void anotherPeersKeyReadsNothingAndGuessingCostsTheAdmission() {
    run("io.sluice.transport.verbs.provider.PeerIsolationCheck");
  }

  @Test
  void peersSharingOneReadDomainPinARegionOnceAndAreServedNoRestrictedRegion() {
    run("io.sluice.transport.verbs.provider.SharedReadDomainCheck");
  }

  @Test
  void aReopenedQueuePairPostsNoKeyOnAnAnswerFromBeforeIt() {
    run("io.sluice.transport.verbs.provider.ReopenedQueuePairCheck");
  }

  @Test
  void shortReadsAcrossAPageBoundaryLandRightOrAsSoftIwarpCopiesThem() {
    run("io.sluice.transport.verbs.diag.ShortReadCheck");
  }

  @Test
  void connectionsLeaveNoIdsAndQueuePairsAreSizedForWhatIsPosted() {
    run("io.sluice.transport.verbs.rc.NodeLifecycleCheck");
  }

  private void run(String task) {
    DisniTask check = runtime.newInstance(task, DisniTask.class);
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    int status = check.run(List.of(address), new PrintStream(text, true, StandardCharsets.UTF_8));
    String report = text.toString(StandardCharsets.UTF_8);
    report.lines()
        .filter(l -> l.startsWith("ISOLATION") || l.startsWith("LIFECYCLE") || l.startsWith("REOPEN") || l.startsWith("SHORT-READ")
            || l.startsWith("PD-COST") || l.startsWith("SHARED-DOMAIN"))
        .forEach(l -> System.out.println("SLUICE-LAB: " + l));
    assertEquals(0, status, report);
  }
}
