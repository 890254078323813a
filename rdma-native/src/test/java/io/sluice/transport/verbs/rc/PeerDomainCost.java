package io.sluice.transport.verbs.rc;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What isolating peers in protection domains costs on this device: allocating and freeing a
 * peer's domain (once per peer, at its first queue pair), and registering a region for one more
 * peer (once per region and peer that reads it, at the peer's first look-up of its key), beside
 * registering it in the node's own domain. Prints one {@code PD-COST} line (microseconds, means).
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
      line.append(String.format(" reg_local_%dk_us=%.0f", size / 1024, registerMicros(node, memory, false)));
      line.append(String.format(" reg_peer_%dk_us=%.0f", size / 1024, registerMicros(node, memory, true)));
    }
    out.println(line);
  }

  /** Mean time to register {@code memory} once more (for a new peer, or locally), then deregistered. */
  private static double registerMicros(RdmaNode node, ByteBuffer memory, boolean peer) throws Exception {
    List<ProtectionDomain> domains = new ArrayList<>();
    List<RdmaRegion> regions = new ArrayList<>();
    try {
      for (int i = 0; i < ROUNDS; i++) {
        domains.add(peer ? node.peerDomain(2_000 + i) : node.localDomain());
      }
      long started = System.nanoTime();
      for (ProtectionDomain d : domains) {
        regions.add(peer ? d.registerReadable(memory) : d.registerLocal(memory));
      }
      return (System.nanoTime() - started) / 1e3 / ROUNDS;
    } finally {
      regions.forEach(RdmaRegion::close);
      if (peer) {
        domains.forEach(ProtectionDomain::release);
      }
    }
  }
}
