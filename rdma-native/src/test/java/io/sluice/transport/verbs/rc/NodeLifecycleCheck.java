package io.sluice.transport.verbs.rc;

import io.sluice.transport.verbs.nativelib.DisniTask;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * In the lab (runs inside the DiSNI loader, started by VerbsIsolationOnDeviceTest): queue pairs
 * opened and closed leave no rdma_cm id behind in DiSNI's event channels, queue pairs carry no
 * more scatter/gather entries than the provider posts, and what costs the per-peer protection
 * domains add (printed as a PD-COST line). Argument: the address of the RDMA device.
 */
public final class NodeLifecycleCheck implements DisniTask {
  private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(60);
  private static final int CONNECTIONS = 5;

  public NodeLifecycleCheck() {}

  @Override
  public int run(List<String> args, PrintStream out) {
    RdmaNode.Settings settings = new RdmaNode.Settings(1024, 2, TimeUnit.SECONDS.toNanos(20), TimeUnit.SECONDS.toNanos(20));
    try {
      InetAddress device = InetAddress.getByName(args.get(0));
      try (RdmaNode server = RdmaNode.open(new InetSocketAddress(device, 0), settings);
          RdmaNode client = RdmaNode.open(new InetSocketAddress(device, 0), settings)) {
        int problems = idsAndLimits(server, client, out);
        PeerDomainCost.measure(server, out);
        return problems;
      }
    } catch (Throwable t) {
      t.printStackTrace(out);
      return 1;
    }
  }

  private static int idsAndLimits(RdmaNode server, RdmaNode client, PrintStream out) throws Exception {
    int problems = 0;
    long deadline = System.nanoTime() + DEADLINE_NANOS;
    int serverIds = server.cmIdCount();
    int clientIds = client.cmIdCount();
    ProtectionDomain domain = server.peerDomain(1);
    try {
      for (int i = 0; i < CONNECTIONS; i++) {
        PreparedConnection prepared = await(client.prepare(server.address(), new RdmaQueuePair.Sizes(4, 0, 0)), deadline);
        CompletableFuture<RdmaQueuePair> accepted = new CompletableFuture<>();
        server.admit(prepared.source(), new RdmaQueuePair.Sizes(1, 0, 0), domain, accepted::complete);
        RdmaQueuePair qp = await(prepared.connect(), deadline);
        if (i == 0) {
          for (RdmaQueuePair q : List.of(qp, await(accepted, deadline))) {
            QueuePairQuery.Snapshot s = q.query();
            out.printf("LIFECYCLE: queue pair limits: %d/%d SGEs (send/receive), READ depth %d out, %d in%n",
                s.maxSendSge(), s.maxRecvSge(), s.maxReadsOut(), s.maxReadsIn());
            if (s.maxSendSge() > 2 || s.maxRecvSge() > 2) {
              out.println("LIFECYCLE: FAIL queue pairs are sized for more SGEs than the provider posts");
              problems++;
            }
          }
        }
        qp.close();
      }
    } finally {
      domain.release();
    }
    boolean settled = waitFor(() -> server.queuePairCount() == 0 && client.queuePairCount() == 0
        && server.cmIdCount() == serverIds && client.cmIdCount() == clientIds && server.peerDomainCount() == 0, deadline);
    out.printf("LIFECYCLE: after %d connections: rdma_cm ids %d -> %d (server), %d -> %d (client), %d peer domains%n",
        CONNECTIONS, serverIds, server.cmIdCount(), clientIds, client.cmIdCount(), server.peerDomainCount());
    if (!settled) {
      out.println("LIFECYCLE: FAIL closed connections left rdma_cm ids or queue pairs behind");
      problems++;
    }
    if (server.peerDomainCount() != 0) {
      out.println("LIFECYCLE: FAIL a peer's protection domain outlived its queue pairs");
      problems++;
    }
    return problems;
  }

  private static boolean waitFor(BooleanSupplier condition, long deadline) throws InterruptedException {
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(20);
    }
    return true;
  }

  static <T> T await(CompletableFuture<T> f, long deadline) throws Exception {
    return f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
  }
}
