package io.sluice.transport.verbs.rc;

/**
 * One RDMA READ: {@code length} bytes from the peer's registered memory at
 * {@code remoteAddress} (authorised by {@code rkey}) into local registered memory at
 * {@code localAddress} (registered under {@code lkey}). Bounds are the caller's business:
 * the device refuses READs outside the remote registration, but the caller should check
 * against the descriptor first so such reads never reach the wire.
 */
public record RdmaRead(long remoteAddress, int rkey, long localAddress, int lkey, int length) {
  public RdmaRead {
    if (length <= 0) {
      throw new IllegalArgumentException("READ length must be positive, was " + length);
    }
  }
}
