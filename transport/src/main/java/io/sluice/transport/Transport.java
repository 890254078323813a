package io.sluice.transport;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * One process's endpoint of the transport: it registers memory, listens for authenticated peers
 * that READ that memory or send requests, and connects to other endpoints. Open one with {@link
 * Transports#open}; close it to revoke every region, close every connection and stop its
 * threads.
 *
 * <p>Thread safe. Regions and connections it hands out are owned by the caller, who closes them;
 * closing the transport closes whatever is left and logs each leaked region.
 */
public interface Transport extends AutoCloseable {
  /** The provider in use: "tcp", "shm" or "verbs". */
  String provider();

  /**
   * This endpoint's node id, carried in its descriptors: derived from a key pair made at open,
   * so new per open, and proven to every peer in the handshake (no peer can claim another's).
   */
  long nodeId();

  /**
   * This endpoint's Ed25519 identity public key (32 bytes, a copy), which {@link #nodeId()}
   * derives from and the handshake proves: what a peer compares {@link Connection#peerIdentityKey()}
   * with to know that it reached this endpoint.
   */
  byte[] identityKey();

  /**
   * The identity key a connection proved for the peer node id {@code node}, while a connection
   * to or from that peer is open or a region's reader or grant names it (a copy); empty
   * otherwise. While it is known, this endpoint refuses at the handshake any other key whose
   * node id is {@code node}, so a node id held that long names this one key: an application that
   * authorizes a node id for longer (a token it issued) checks here that the key is still the one.
   */
  java.util.Optional<byte[]> peerIdentityKey(long node);

  /** The address peers connect to. */
  NodeAddress localAddress();

  /**
   * Allocates {@code length} bytes of off-heap memory, zeroed, registered for remote READ by any
   * authenticated peer that holds the descriptor.
   */
  default RegisteredRegion allocate(int length) throws TransportException {
    return allocateFor(ANY_PEER, length);
  }

  /**
   * Allocates like {@link #allocate(int)}, but only the authenticated peer whose node id is
   * {@code reader} may READ the region (or map it through shm); to any other peer the key is
   * unknown ({@link UnknownKeyException}), so a descriptor that leaks reads nothing. {@link
   * #ANY_PEER} lifts the restriction. Until the region is freed, {@code reader} names one
   * identity key: the one a connection proved for it, or if none has yet, the first to prove it
   * ({@link #peerIdentityKey}).
   */
  RegisteredRegion allocateFor(long reader, int length) throws TransportException;

  /** The reader of {@link #allocateFor} that lets every authenticated peer READ. */
  long ANY_PEER = 0L;

  /**
   * The reader of {@link #allocateFor} that lets no peer READ until {@link
   * RegisteredRegion#allowReader} grants one. No transport has this node id.
   */
  long GRANTED_ONLY = Long.MIN_VALUE;

  /**
   * Maps {@code length} bytes of {@code file} from {@code offset} read-only and registers them
   * for remote READ. The file must not shrink while registered.
   */
  RegisteredRegion registerFile(Path file, long offset, long length) throws IOException;

  /** Connects and authenticates; completes within the connect deadline. */
  CompletableFuture<Connection> connect(NodeAddress peer);

  /**
   * This transport's counters (READs and bytes by data path, latencies, connections, handshake
   * failures, registered memory), for the integrations to expose; lives as long as the transport.
   */
  io.sluice.transport.metrics.TransportMetrics metrics();

  /** Regions registered and not yet freed: a leak check for tests. */
  int liveRegionCount();

  @Override
  void close();
}
