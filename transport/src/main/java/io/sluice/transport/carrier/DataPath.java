package io.sluice.transport.carrier;

import io.sluice.transport.TransportException;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A way for peers to reach a transport's registered memory beside the carrier's READ frames:
 * shared memory for same-host peers, for instance. The transport backs its regions through it
 * ({@link #allocate}, {@link #publishFile}), serves its {@link #controlService} on the carrier,
 * and after connecting asks it for a {@link PeerPath} to the peer ({@link #attach}); READs go
 * that way when there is one, else over the carrier's frames.
 *
 * <p>Owned by one transport, which closes it after its regions. Thread safe.
 */
public interface DataPath extends AutoCloseable {
  /** What {@link io.sluice.transport.Connection#dataPath()} says for a connection that uses it. */
  String name();

  /** The id its control service is registered under on the carrier (1..255). */
  int serviceId();

  /** The service that tells peers where the regions of {@code regions} live. */
  ControlService controlService(RegionTable regions);

  /**
   * Memory of one region and how it is reached on this path. The transport frees {@code memory}
   * when the region is freed, after calling {@code release}; {@code revoke} runs when the region is
   * revoked, before any of that.
   */
  record Published(ByteBuffer memory, Region.ShmLocation location, Runnable revoke, Runnable release) {}

  /** Allocates {@code length} zeroed bytes for the region with {@code key} and publishes them. */
  Published allocate(long key, int length) throws TransportException;

  /**
   * Publishes a file range the transport mapped ({@code mapped}, bytes {@code offset} to {@code
   * offset + mapped.capacity()} of {@code file}) for the region with {@code key}; a path may
   * leave it out of its reach (no location), and readers then READ it over the carrier.
   */
  Published publishFile(long key, Path file, long offset, ByteBuffer mapped) throws TransportException;

  /**
   * Asks the peer of a new connection whether this path reaches it, within {@code timeoutNanos}.
   * Empty when it does not (the peer has no such path, or it is on another host).
   */
  Optional<PeerPath> attach(CarrierConnection connection, long timeoutNanos) throws TransportException;

  /** Releases what the path holds; after every region is freed. */
  @Override
  void close();
}
