package io.sluice.transport;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * An authenticated connection to one peer transport, opened by {@link Transport#connect}. The
 * side that connected issues READs and requests; the accepting side serves them. Both READs and
 * requests may be issued from any thread; each call returns at once and completes a future.
 *
 * <p>Every future completes within the configured deadlines: normally, or exceptionally with a
 * {@link TransportException} subtype that says what went wrong. Closing the connection fails
 * everything still outstanding with {@link PeerClosedException}.
 */
public interface Connection extends AutoCloseable {
  /** The address this connection was opened to. */
  NodeAddress peer();

  /** The node id of the peer, as it appears in its descriptors; the peer proved it in the handshake. */
  long peerNode();

  /**
   * The peer's Ed25519 identity public key (32 bytes, a copy), which it proved in the handshake
   * and which {@link #peerNode()} derives from. A node id is 64 bits of a hash: whoever must know
   * that the peer is one particular node, and not merely one with the same id, compares this.
   */
  byte[] peerIdentityKey();

  /** Which data path READs take: "tcp", "shm" or "verbs". */
  String dataPath();

  /**
   * Which data path the READs of {@code remote} took, known once one of them completed: {@link
   * #dataPath()}, or "tcp" for a region that path leaves to the connection's tcp READs (shm: a
   * registered file the reader does not trust to map, a region the owner keeps in direct memory).
   */
  default String dataPath(RemoteDescriptor remote) {
    return dataPath();
  }

  /**
   * Whether this connection's frames (READ bodies and messages) travel encrypted (AES-GCM): true
   * when either side set {@code sluice.transport.encryption}. Memory the data path maps (shm) is
   * not a network and is never encrypted.
   */
  default boolean encrypted() {
    return false;
  }

  /** False once closed locally or by the peer. */
  boolean isOpen();

  /**
   * Issues many READs in one call. The returned list holds one future per request, in order.
   * The destination bytes of a request are written only before its future completes normally.
   */
  List<CompletableFuture<Void>> readBatch(List<ReadRequest> requests);

  /** Issues one READ; see {@link #readBatch}. */
  default CompletableFuture<Void> read(
      RemoteDescriptor remote, long remoteOffset, RegisteredRegion local, long localOffset, int length) {
    return readBatch(List.of(new ReadRequest(remote, remoteOffset, local, localOffset, length))).get(0);
  }

  /**
   * A read-only view of {@code length} bytes of {@code remote} from {@code remoteOffset}, without a
   * copy, where the data path maps the peer's memory (shm); empty where it does not (tcp, verbs),
   * and then {@link #readBatch} is the way. Fails as a READ of the same range would.
   */
  default CompletableFuture<Optional<RemoteView>> view(RemoteDescriptor remote, long remoteOffset, long length) {
    return CompletableFuture.completedFuture(Optional.empty());
  }

  /**
   * Sends a request message (at most the configured message size) to the peer's {@link
   * MessageHandler} and completes with its response. The request's remaining bytes are copied
   * before this returns; the response buffer belongs to the caller.
   */
  CompletableFuture<ByteBuffer> request(ByteBuffer message);

  /** Closes the connection; outstanding futures fail with {@link PeerClosedException}. */
  @Override
  void close();
}
