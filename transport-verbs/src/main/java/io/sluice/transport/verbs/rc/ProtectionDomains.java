package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvContext;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The protection domains of one node: its own, one per peer, and one that every peer shares,
 * with their reference counts. A peer's domain and the shared one are allocated at their first
 * reference and freed at their last release; the node's own domain is freed when the node and
 * every region in it let go.
 *
 * <p>Thread safe: one lock guards every count and the map of peer domains.
 */
final class ProtectionDomains {
  private static final Logger LOG = LoggerFactory.getLogger(ProtectionDomains.class);

  private final IbvContext context;
  private final ProtectionDomain local;
  private final Map<Long, ProtectionDomain> peers = new HashMap<>();
  /** The domain every peer shares while it has references; null before and after. */
  private ProtectionDomain shared;

  ProtectionDomains(IbvContext context) throws IOException {
    this.context = context;
    this.local = new ProtectionDomain(this, context.allocPd(), 0, ProtectionDomain.Kind.NODE);
  }

  /** The node's own domain; the node holds the first reference. */
  ProtectionDomain local() {
    return local;
  }

  /** The domain of {@code peer} with one more reference, allocated if it has none. */
  synchronized ProtectionDomain peer(long peer) throws IOException {
    ProtectionDomain d = peers.get(peer);
    if (d != null) {
      d.references++;
      return d;
    }
    d = new ProtectionDomain(this, context.allocPd(), peer, ProtectionDomain.Kind.PEER);
    peers.put(peer, d);
    return d;
  }

  /** The domain every peer shares, with one more reference, allocated if it has none. */
  synchronized ProtectionDomain shared() throws IOException {
    if (shared != null) {
      shared.references++;
      return shared;
    }
    shared = new ProtectionDomain(this, context.allocPd(), 0, ProtectionDomain.Kind.SHARED);
    return shared;
  }

  synchronized int peerCount() {
    return peers.size();
  }

  synchronized void retain(ProtectionDomain d) throws IOException {
    if (d.references <= 0) {
      throw new IOException("the protection domain is freed (its node closed)");
    }
    d.references++;
  }

  synchronized void release(ProtectionDomain d) {
    if (d.references <= 0) {
      throw new IllegalStateException("release of a freed protection domain");
    }
    if (--d.references > 0) {
      return;
    }
    if (d.isShared()) {
      if (shared == d) {
        shared = null;
      }
    } else if (!d.isLocal()) {
      peers.remove(d.peer(), d);
    }
    try {
      int rc = d.pd().deallocPd();
      if (rc != 0) {
        LOG.warn("freeing {} failed with errno {}; it stays allocated", d, -rc);
      }
    } catch (Exception e) { // DiSNI declares `throws Exception`
      LOG.warn("freeing {} failed; it stays allocated", d, e);
    }
  }
}
