package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.carrier.ControlService;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import io.sluice.transport.wire.Frames;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * Tells authenticated peers where this transport's shared memory lives ({@link ShmMessages}):
 * HELLO answers with the arena's folder and token, OPEN with the backing file, range and
 * revocation slot of a key the peer may read (an unknown, revoked or not-granted key fails as
 * it would for a READ). Stateless beyond its arena and table; thread safe.
 */
final class ShmControlService implements ControlService {
  private final ShmArena arena;
  private final RegionTable regions;

  ShmControlService(ShmArena arena, RegionTable regions) {
    this.arena = arena;
    this.regions = regions;
  }

  @Override
  public ByteBuffer serve(long peerNode, InetAddress peerAddress, ByteBuffer request) throws TransportException {
    byte op = ShmMessages.operation(request);
    if (op == ShmMessages.HELLO) {
      Frames.expectConsumed("shm HELLO", request);
      return ShmMessages.encode(arena.info());
    }
    Region region = regions.acquire(ShmMessages.key(request), peerNode);
    try {
      var loc = region.shmLocation();
      if (loc.isEmpty()) {
        throw new TransportUnavailableException("region is not in shared memory");
      }
      return ShmMessages.encode(new ShmArena.Location(loc.get().path(), loc.get().fileOffset(), region.length(),
          loc.get().slot()));
    } finally {
      region.release();
    }
  }
}
