package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.carrier.CarrierConnection;
import io.sluice.transport.carrier.ControlService;
import io.sluice.transport.carrier.DataPath;
import io.sluice.transport.carrier.PeerPath;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shared memory as a data path beside tcp: regions are files in this transport's {@link
 * ShmArena}, each with a revocation slot; its {@link ShmControlService} tells same-host peers
 * where they are, and a connection to a peer that sees the same folder reads it through a
 * {@link ShmPeer}. Owned by one transport, which closes it after its regions. Thread safe.
 */
final class ShmDataPath implements DataPath {
  private static final Logger LOG = LoggerFactory.getLogger(ShmDataPath.class);

  private final ShmArena arena;
  private final List<Path> trustedFileRoots;

  ShmDataPath(ShmArena arena, List<Path> trustedFileRoots) {
    this.arena = arena;
    this.trustedFileRoots = List.copyOf(trustedFileRoots);
  }

  @Override
  public String name() {
    return "shm";
  }

  @Override
  public int serviceId() {
    return ShmMessages.SERVICE;
  }

  @Override
  public ControlService controlService(RegionTable regions) {
    return new ShmControlService(arena, regions);
  }

  @Override
  public Published allocate(long key, int length) throws TransportException {
    ShmArena.Allocation a;
    try {
      a = arena.allocate(length);
    } catch (IOException e) {
      LOG.warn("No room for {} bytes in shm arena {} ({}): the region lives in direct memory and peers"
          + " READ it over the carrier", length, arena.directory(), e.getMessage());
      return new Published(allocateDirect(length), null, () -> { }, () -> { });
    }
    int slot;
    try {
      slot = arena.takeSlot(key);
    } catch (TransportException e) {
      DirectMemory.free(a.buffer());
      arena.discard(a);
      throw e;
    }
    return new Published(a.buffer(), new Region.ShmLocation(a.path(), 0, slot),
        () -> arena.revokeSlot(slot), () -> {
          arena.freeSlot(slot);
          arena.discard(a);
        });
  }

  /**
   * Publishes the file under its real path with a revocation slot. A reader maps it only if the
   * file lies below one of the reader's own trusted roots; otherwise it READs it over the carrier.
   */
  @Override
  public Published publishFile(long key, Path file, long offset, ByteBuffer mapped) throws TransportException {
    Path real;
    try {
      real = file.toRealPath();
    } catch (IOException e) {
      throw new TransportException("cannot resolve registered file " + file + ": " + e.getMessage(), e);
    }
    int slot = arena.takeSlot(key);
    return new Published(mapped, new Region.ShmLocation(real.toString(), offset, slot),
        () -> arena.revokeSlot(slot), () -> arena.freeSlot(slot));
  }

  @Override
  public Optional<PeerPath> attach(CarrierConnection connection, long timeoutNanos) throws TransportException {
    return ShmPeer.attach(connection, timeoutNanos, trustedFileRoots).map(PeerPath.class::cast);
  }

  private static ByteBuffer allocateDirect(int length) throws TransportException {
    try {
      return ByteBuffer.allocateDirect(length);
    } catch (OutOfMemoryError e) {
      throw new TransportException("cannot allocate " + length + " bytes of direct memory: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    arena.close();
  }
}
