package io.sluice.transport.carrier;

import io.sluice.transport.ReadRequest;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.RemoteView;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One connection's way to a peer's memory on a {@link DataPath}: READs go through it instead of
 * the carrier's READ frames. The connection calls {@link #sweep} from the carrier's timer and
 * {@link #close} once when it closes. Thread safe.
 */
public interface PeerPath {
  /** Reads what {@code r} asks into its destination; completes when the bytes are there. */
  CompletableFuture<Void> read(ReadRequest r);

  /** A read-only view of a range of a peer's region where this path maps it; see {@code Connection#view}. */
  default CompletableFuture<Optional<RemoteView>> view(RemoteDescriptor remote, long remoteOffset, long length) {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  /**
   * Whether READs of the peer's region {@code key} went through this path when last asked; false
   * for a region the path leaves to the carrier's READ frames, or has not opened yet.
   */
  boolean reaches(long key);

  /** Releases what the path holds for regions the peer has revoked since. */
  void sweep();

  /** Releases everything; later READs are failed by the connection. */
  void close();
}
