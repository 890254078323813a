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

  /** This endpoint's node id, carried in its descriptors; random per open. */
  long nodeId();

  /** The address peers connect to. */
  NodeAddress localAddress();

  /** Allocates {@code length} bytes of off-heap memory, zeroed, registered for remote READ. */
  RegisteredRegion allocate(int length) throws TransportException;

  /**
   * Maps {@code length} bytes of {@code file} from {@code offset} read-only and registers them
   * for remote READ. The file must not shrink while registered.
   */
  RegisteredRegion registerFile(Path file, long offset, long length) throws IOException;

  /** Connects and authenticates; completes within the connect deadline. */
  CompletableFuture<Connection> connect(NodeAddress peer);

  /** Regions registered and not yet freed: a leak check for tests. */
  int liveRegionCount();

  @Override
  void close();
}
