package io.sluice.transport.tcp;

import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.TransportException;
import io.sluice.transport.carrier.ReadService;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.nio.ByteBuffer;

/**
 * Serves the carrier's READ frames straight from registered memory: a key and bounds check,
 * then the region's own bytes, which the carrier writes with one gather write (or seals into a
 * copy on an encrypted connection). The region stays retained until they are written. Stateless
 * beyond its table; thread safe.
 */
final class RegionReads implements ReadService {
  private final RegionTable regions;

  RegionReads(RegionTable regions) {
    this.regions = regions;
  }

  @Override
  public Bytes read(long peerNode, long key, long offset, int length) throws TransportException {
    Region region = regions.acquire(key, peerNode);
    long end = offset + length;
    if (end < 0 || end > region.length()) {
      region.release();
      throw new ReadOutOfBoundsException(
          "READ [" + offset + ", +" + length + ") outside region of " + region.length() + " bytes");
    }
    ByteBuffer data = region.buffer();
    data.limit((int) end).position((int) offset);
    return new Bytes(data, region::release);
  }
}
