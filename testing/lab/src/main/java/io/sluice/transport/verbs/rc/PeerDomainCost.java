package io.sluice.transport.verbs.rc;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What isolating peers in protection domains costs on this device: allocating and freeing a
 * peer's domain (once per peer, at its first queue pair), and registering a region once more
 * for a peer (once per region and peer that reads it, at the peer's first look-up of its key),
 * beside registering it in the node's own domain; the two registrations alternate so that both
 * see the same state of the machine. Prints one {@code PD-COST} line (microseconds, means).
 */
final class PeerDomainCost {
  private static final int ROUNDS = 16;
  private static final int[] SIZES = {64 * 1024, 1024 * 1024, 16 * 1024 * 1024};

  private PeerDomainCost() {}

  static void measure(RdmaNode node, PrintStream out) throws Exception {
    StringBuilder line = new StringBuilder("PD-COST");
    long started = System.nanoTime();
    for (int i = 0; i < ROUNDS; i++) {
      node.peerDomain(1_000 + i).release();
    }
    line.append(String.format(" alloc_free_pd_us=%.0f", (System.nanoTime() - started) / 1e3 / ROUNDS));
    for (int size : SIZES) {
      ByteBuffer memory = ByteBuffer.allocateDirect(size);
      long local = 0;
      long peer = 0;
      List<RdmaRegion> regions = new ArrayList<>();
      List<ProtectionDomain> domains = new ArrayList<>();
      try {
        for (int i = 0; i < ROUNDS; i++) {
          ProtectionDomain d = node.peerDomain(2_000 + i);
          domains.add(d);
          long t0 = System.nanoTime();
          regions.add(node.registerLocal(memory));
          long t1 = System.nanoTime();
          regions.add(d.registerReadable(memory));
          peer += System.nanoTime() - t1;
          local += t1 - t0;
        }
      } finally {
        regions.forEach(RdmaRegion::close);
        domains.forEach(ProtectionDomain::release);
      }
      line.append(String.format(" reg_local_%dk_us=%.0f reg_peer_%dk_us=%.0f", size / 1024, local / 1e3 / ROUNDS,
          size / 1024, peer / 1e3 / ROUNDS));
    }
    out.println(line);
  }
}
