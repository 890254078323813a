package io.sluice.transport;

import java.util.Objects;

/**
 * One range of a one-sided READ: {@code length} bytes at {@code remoteOffset} of the remote
 * region go to {@code localOffset} of the local registered destination.
 */
public record ReadRequest(
    RemoteDescriptor remote, long remoteOffset, RegisteredRegion local, long localOffset, int length) {
  public ReadRequest {
    Objects.requireNonNull(remote, "remote");
    Objects.requireNonNull(local, "local");
    if (remoteOffset < 0 || localOffset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "negative offset or length: remote " + remoteOffset + ", local " + localOffset + ", length " + length);
    }
    if (localOffset + length > local.length()) {
      throw new IllegalArgumentException(
          "destination too small: " + localOffset + "+" + length + " > " + local.length());
    }
  }
}
