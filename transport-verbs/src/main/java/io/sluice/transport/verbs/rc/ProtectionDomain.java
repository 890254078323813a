package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A protection domain of a node: the boundary the device enforces. A queue pair reaches only
 * memory registered in its own domain, for its own work requests and for its peer's READs.
 * So memory that one peer may READ is registered in that peer's domain ({@link
 * RdmaNode#peerDomain}) and nowhere else remotely readable, and every queue pair that serves
 * the peer lives there: another peer's queue pair cannot name it, whatever rkey it guesses.
 * The node's own domain ({@link RdmaNode#localDomain}) holds memory for local use only (READ
 * destinations, receive buffers of queue pairs that serve nobody); it refuses remote access.
 * Where isolation between peers is given up for memory every peer may read anyway, one domain
 * shared by all peers ({@link RdmaNode#sharedDomain}) holds that memory, registered once, and
 * the queue pairs that serve every peer's READs.
 *
 * <p>Reference counted: {@link RdmaNode#peerDomain} hands out a reference, each region
 * registered here and each queue pair created here holds one, {@link #release()} gives one
 * back, and the last one frees the domain. Thread safe.
 */
public final class ProtectionDomain {
  private static final int LOCAL_WRITE = 1; // IBV_ACCESS_LOCAL_WRITE
  private static final int REMOTE_READ = 4; // IBV_ACCESS_REMOTE_READ

  /** The node's own domain, a peer's, or the one every peer shares. */
  enum Kind { NODE, PEER, SHARED }

  private final ProtectionDomains domains;
  private final IbvPd pd;
  private final long peer;
  private final Kind kind;
  /** References held; guarded by the owning {@link ProtectionDomains}. 0 means freed. */
  int references = 1;

  ProtectionDomain(ProtectionDomains domains, IbvPd pd, long peer, Kind kind) {
    this.domains = domains;
    this.pd = pd;
    this.peer = peer;
    this.kind = kind;
  }

  /** Whether this is the domain every peer shares (see {@link RdmaNode#sharedDomain}). */
  public boolean isShared() {
    return kind == Kind.SHARED;
  }

  /** The peer node this domain serves; meaningless for the node's own domain and the shared one. */
  public long peer() {
    return peer;
  }

  /** Whether this is the node's own domain, which never holds remotely readable memory. */
  public boolean isLocal() {
    return kind == Kind.NODE;
  }

  /**
   * Registers direct memory that the peer of this domain may READ (remote READ only; the
   * device never writes it). Closing the region revokes that at once.
   *
   * @throws IllegalStateException on the node's own domain
   */
  public RdmaRegion registerReadable(ByteBuffer buffer) throws IOException {
    if (isLocal()) {
      throw new IllegalStateException("the node's own protection domain holds no remotely readable memory");
    }
    return register(buffer, REMOTE_READ);
  }

  /**
   * Registers direct memory for local use by this domain's queue pairs: a READ or receive
   * destination when writable, a SEND source either way. No peer can READ it.
   */
  public RdmaRegion registerLocal(ByteBuffer buffer) throws IOException {
    return register(buffer, buffer.isReadOnly() ? 0 : LOCAL_WRITE);
  }

  private RdmaRegion register(ByteBuffer buffer, int access) throws IOException {
    if (!buffer.isDirect()) {
      throw new IllegalArgumentException("only direct buffers can be registered");
    }
    domains.retain(this);
    try {
      IbvMr mr = pd.regMr(buffer, access).execute().free().getMr();
      return new RdmaRegion(mr, buffer, this::release);
    } catch (IOException | RuntimeException e) {
      release();
      throw e;
    }
  }

  /** Gives one reference back; the last one frees the domain. Call once per reference. */
  public void release() {
    domains.release(this);
  }

  IbvPd pd() {
    return pd;
  }

  @Override
  public String toString() {
    return switch (kind) {
      case NODE -> "ProtectionDomain[node]";
      case SHARED -> "ProtectionDomain[every peer]";
      case PEER -> "ProtectionDomain[peer " + peer + "]";
    };
  }
}
