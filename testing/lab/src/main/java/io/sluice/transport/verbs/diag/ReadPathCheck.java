package io.sluice.transport.verbs.diag;

import io.sluice.transport.Eventually;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.verbs.rc.PreparedConnection;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Exercises the {@link RdmaNode} data path with two nodes in this JVM: admitted connect,
 * a batch of READs larger than the in-flight limit, a refused (not admitted) connect, a
 * READ of a closed region, and the peer going away. Not thread safe; one run at a time.
 */
final class ReadPathCheck {

  private static final int SLICE = 16 * 1024;
  private static final int SLICES = 64;

  private ReadPathCheck() {}

  /** Returns the number of steps that did not behave as they must. */
  static int run(InetSocketAddress serverAddress, long timeoutNanos, PrintStream out) throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    RdmaNode.Settings settings = new RdmaNode.Settings(1024, 2, TimeUnit.SECONDS.toNanos(20), TimeUnit.SECONDS.toNanos(20));
    int wrong = 0;
    RdmaNode server = RdmaNode.open(serverAddress, settings);
    ProtectionDomain clientDomain = server.peerDomain(CLIENT_NODE);
    try (RdmaNode client = RdmaNode.open(new InetSocketAddress(serverAddress.getAddress(), 0), settings)) {
      ByteBuffer data = ByteBuffer.allocateDirect(SLICE * SLICES);
      Pattern.fill(data);
      ByteBuffer target = ByteBuffer.allocateDirect(SLICE * SLICES);
      try (RdmaRegion remote = clientDomain.registerReadable(data); RdmaRegion local = client.registerLocal(target)) {
        RdmaQueuePair qp = connect(client, server, clientDomain, true, deadline);
        List<RdmaRead> reads = new ArrayList<>();
        for (int i = 0; i < SLICES; i++) {
          reads.add(new RdmaRead(remote.address() + (long) i * SLICE, remote.rkey(),
              local.address() + (long) i * SLICE, local.lkey(), SLICE));
        }
        long started = System.nanoTime();
        for (CompletableFuture<Void> f : qp.readBatch(reads)) {
          await(f, deadline);
        }
        double ms = (System.nanoTime() - started) / 1e6;
        Pattern.verify(target, "batched READs");
        out.printf("DISNI-CHECK readpath: %d READs of %d KiB (16 in flight) verified in %.1f ms%n",
            SLICES, SLICE / 1024, ms);

        wrong += expectRefused(client, server, deadline, out);

        ByteBuffer readOnly = ByteBuffer.allocateDirect(SLICE);
        Pattern.fill(readOnly);
        try (RdmaRegion shared = clientDomain.registerReadable(readOnly.asReadOnlyBuffer())) {
          Pattern.clear(target);
          await(qp.readBatch(List.of(new RdmaRead(shared.address(), shared.rkey(), local.address(),
              local.lkey(), SLICE))).get(0), deadline);
          Pattern.verify(target.duplicate().limit(SLICE).slice(), "READ of a read-only registration");
          out.println("DISNI-CHECK readpath: READ of a read-only registration verified");
        }

        ByteBuffer doomed = ByteBuffer.allocateDirect(SLICE);
        RdmaRegion closed = clientDomain.registerReadable(doomed);
        RdmaRead stale = new RdmaRead(closed.address(), closed.rkey(), local.address(), local.lkey(), 64);
        closed.close();
        wrong += expectFailure("closed region", qp.readBatch(List.of(stale)).get(0),
            RegionRevokedException.class, deadline, out);
        wrong += expectFailure("READ after a failed one", qp.readBatch(List.of(reads.get(0))).get(0),
            PeerClosedException.class, deadline, out);

        RdmaQueuePair second = connect(client, server, clientDomain, true, deadline);
        clientDomain.release(); // the queue pairs hold their own references
        clientDomain = null;
        server.close();
        try {
          Eventually.holds("the queue pair closes after the peer node closed",
              Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), () -> !second.isOpen());
        } catch (AssertionError stillOpen) {
          // reported and counted below, as every step of this check is
        }
        out.println("DISNI-CHECK readpath: queue pair " + (second.isOpen() ? "still open" : "closed")
            + " after the peer node closed");
        wrong += second.isOpen() ? 1 : 0;
        wrong += expectFailure("READ after the peer left", second.readBatch(List.of(reads.get(0))).get(0),
            PeerClosedException.class, deadline, out);
      }
    } finally {
      if (clientDomain != null) {
        clientDomain.release();
      }
      server.close();
    }
    return wrong;
  }

  /** The node id the server knows the client by (for its protection domain). */
  private static final long CLIENT_NODE = 1L;

  static RdmaQueuePair connect(RdmaNode client, RdmaNode server, ProtectionDomain domain, boolean admit,
      long deadline) throws IOException {
    PreparedConnection prepared = await(client.prepare(server.address(), new RdmaQueuePair.Sizes(16, 0, 0)), deadline);
    if (admit) {
      server.admit(prepared.source(), new RdmaQueuePair.Sizes(1, 0, 0), domain, qp -> { });
    }
    return await(prepared.connect(), deadline);
  }

  private static int expectRefused(RdmaNode client, RdmaNode server, long deadline, PrintStream out) {
    try {
      connect(client, server, null, false, deadline);
      out.println("DISNI-CHECK readpath: a connect that was not admitted SUCCEEDED");
      return 1;
    } catch (IOException e) {
      out.println("DISNI-CHECK readpath: connect without admission refused: " + e.getMessage());
      return 0;
    }
  }

  private static int expectFailure(String what, Future<Void> future, Class<? extends TransportException> type,
      long deadline, PrintStream out) {
    try {
      await(future, deadline);
      out.println("DISNI-CHECK readpath: " + what + " SUCCEEDED");
      return 1;
    } catch (IOException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      boolean right = type.isInstance(cause);
      out.println("DISNI-CHECK readpath: " + what + " failed with " + cause.getClass().getSimpleName()
          + (right ? "" : " (expected " + type.getSimpleName() + ")") + ": " + cause.getMessage());
      return right ? 0 : 1;
    }
  }

  static <T> T await(Future<T> future, long deadline) throws IOException {
    try {
      return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IOException(e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }
}
