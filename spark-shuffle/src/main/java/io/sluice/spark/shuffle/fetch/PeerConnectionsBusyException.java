package io.sluice.spark.shuffle.fetch;

import io.sluice.transport.TransportTimeoutException;

/**
 * A use of a peer's connection waited its whole deadline for room under the executor's bound on
 * connections to peers ({@code spark.shuffle.rdma.maxPeerConnections}): every connection stayed in
 * use meanwhile, so none could be closed for this peer's. The reduce task that asked turns it into
 * a fetch failure, as any other connection failure.
 */
public final class PeerConnectionsBusyException extends TransportTimeoutException {
  private static final long serialVersionUID = 1L;

  public PeerConnectionsBusyException(String message) {
    super(message);
  }
}
