package io.sluice.transport.verbs.diag;

import io.sluice.transport.verbs.nativelib.DisniTask;
import io.sluice.transport.verbs.rc.PageCrossingReads;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * In the lab (runs inside the DiSNI loader, started by VerbsIsolationOnDeviceTest): what the
 * device itself lands for short READs whose source crosses a page boundary, posted raw on a
 * queue pair, without the provider's split ({@link PageCrossingReads}). Every READ of 2 to 40
 * bytes is posted once for every number of its bytes before the boundary, and each is sorted:
 * <ul>
 *   <li>right;
 *   <li>wrong the way soft-iWARP's {@code siw_try_1seg} copies a reply of at most 32 bytes: from
 *       byte {@code k} on (k = the bytes on the second page), the bytes at the start of the page
 *       that holds source byte {@code k};
 *   <li>wrong any other way.
 * </ul>
 * The check fails on any READ of the third kind, and on a READ of the second kind longer than
 * 32 bytes; it reports how many the device got wrong as siw does (none on a device without the
 * fault). Argument: the address of the RDMA device both nodes bind.
 */
public final class ShortReadCheck implements DisniTask {
  private static final int PAGE = (int) PageCrossingReads.PAGE_BYTES;
  private static final int LONGEST = 40;
  private static final long CLIENT_NODE = 1L;

  public ShortReadCheck() {}

  @Override
  public int run(List<String> args, PrintStream out) {
    try {
      return check(InetAddress.getByName(args.get(0)), out);
    } catch (Throwable t) {
      t.printStackTrace(out);
      return 1;
    }
  }

  private static int check(InetAddress device, PrintStream out) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    RdmaNode.Settings settings = new RdmaNode.Settings(1024, 2, TimeUnit.SECONDS.toNanos(20),
        TimeUnit.SECONDS.toNanos(20));
    RdmaNode server = RdmaNode.open(new InetSocketAddress(device, 0), settings);
    ProtectionDomain domain = server.peerDomain(CLIENT_NODE);
    ByteBuffer sourceMemory = ByteBuffer.allocateDirect(4 * PAGE);
    ByteBuffer source = sourceMemory.alignedSlice(PAGE); // three whole pages: boundaries at PAGE, 2 * PAGE
    Pattern.fill(source);
    List<int[]> plan = new ArrayList<>(); // {length, bytes before the boundary}
    for (int n = 2; n <= LONGEST; n++) {
      for (int before = 1; before < n; before++) {
        plan.add(new int[] {n, before});
      }
    }
    ByteBuffer target = ByteBuffer.allocateDirect(plan.size() * 64);
    int right = 0;
    int asSiw = 0;
    List<String> other = new ArrayList<>();
    List<String> siwTooLong = new ArrayList<>();
    try (RdmaNode client = RdmaNode.open(new InetSocketAddress(device, 0), settings);
        RdmaRegion remote = domain.registerReadable(source);
        RdmaRegion local = client.registerLocal(target)) {
      RdmaQueuePair qp = ReadPathCheck.connect(client, server, domain, true, deadline);
      List<RdmaRead> reads = new ArrayList<>();
      for (int i = 0; i < plan.size(); i++) {
        int from = 2 * PAGE - plan.get(i)[1];
        reads.add(new RdmaRead(remote.address() + from, remote.rkey(), local.address() + i * 64L, local.lkey(),
            plan.get(i)[0]));
      }
      // At most 16 in flight on the queue pair (its READ depth); the rest wait in order.
      List<CompletableFuture<Void>> done = qp.readBatch(reads);
      for (CompletableFuture<Void> f : done) {
        ReadPathCheck.await(f, deadline);
      }
      for (int i = 0; i < plan.size(); i++) {
        int n = plan.get(i)[0];
        int before = plan.get(i)[1];
        int from = 2 * PAGE - before;
        int firstWrong = firstWrong(target, i * 64, from, n);
        if (firstWrong < 0) {
          right++;
          continue;
        }
        if (landedAsSiw(target, i * 64, from, n, before)) {
          asSiw++;
          if (n > PageCrossingReads.SHORT_READ_BYTES) {
            siwTooLong.add(n + " B with " + before + " before the boundary");
          }
        } else {
          other.add(n + " B with " + before + " before the boundary: byte " + firstWrong + " is "
              + String.format("%02x", target.get(i * 64 + firstWrong) & 0xff));
        }
      }
    } finally {
      domain.release();
      server.close();
    }
    String device0 = device.getHostAddress();
    out.printf("SHORT-READ %s: %d READs of 2-%d B across a page boundary: %d right, %d wrong as soft-iWARP's"
        + " siw_try_1seg copies a reply of at most %d B, %d wrong otherwise%n", device0, plan.size(), LONGEST,
        right, asSiw, PageCrossingReads.SHORT_READ_BYTES, other.size());
    other.stream().limit(5).forEach(o -> out.println("SHORT-READ " + device0 + ": wrong otherwise: " + o));
    siwTooLong.stream().limit(5).forEach(o -> out.println("SHORT-READ " + device0 + ": longer than "
        + PageCrossingReads.SHORT_READ_BYTES + " B yet wrong as siw: " + o));
    return other.isEmpty() && siwTooLong.isEmpty() ? 0 : 1;
  }

  /** The first byte of the READ at {@code at} that is not the source's, or -1. */
  private static int firstWrong(ByteBuffer target, int at, int from, int n) {
    for (int k = 0; k < n; k++) {
      if (target.get(at + k) != Pattern.at(from + k)) {
        return k;
      }
    }
    return -1;
  }

  /**
   * Whether the READ landed as siw's copy makes it: its first {@code min(part, before)} bytes
   * right (part = the bytes on the second page), and from byte {@code part} on the bytes at the
   * start of the page holding source byte {@code part}. Bytes between are read past the first
   * page's mapping and are not predictable.
   */
  private static boolean landedAsSiw(ByteBuffer target, int at, int from, int n, int before) {
    int part = n - before;
    for (int k = 0; k < Math.min(part, before); k++) {
      if (target.get(at + k) != Pattern.at(from + k)) {
        return false;
      }
    }
    int page = (from + part) / PAGE * PAGE;
    for (int k = part; k < n; k++) {
      if (target.get(at + k) != Pattern.at(page + k - part)) {
        return false;
      }
    }
    return true;
  }
}
