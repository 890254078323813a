package io.sluice.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.ReadOutOfBoundsException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.carrier.ReadService;
import io.sluice.transport.crypto.PeerIdentities;
import io.sluice.transport.region.Region;
import io.sluice.transport.region.RegionTable;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * READ frames served from registered memory: the bytes asked for, the region pinned until they
 * are written, and every refusal typed (so the peer sees it as such) without pinning anything.
 */
class RegionReadsTest {
  private static final long PEER = 7;

  private static Region region(RegionTable table, long reader, int length) {
    ByteBuffer memory = ByteBuffer.allocateDirect(length);
    for (int i = 0; i < length; i++) {
      memory.put(i, (byte) i);
    }
    long key = table.newKey();
    Region r = new Region(new RemoteDescriptor(1, 0, length, key), reader, memory, null, () -> table.revoke(key),
        () -> { }, new PeerIdentities());
    table.add(r);
    return r;
  }

  @Test
  void servesTheRangeAndPinsTheRegionUntilWritten() throws Exception {
    RegionTable table = new RegionTable();
    Region r = region(table, PEER, 100);
    ReadService.Bytes bytes = new RegionReads(table).read(PEER, r.descriptor().key(), 10, 20);
    assertEquals(20, bytes.data().remaining());
    assertEquals(10, bytes.data().get(bytes.data().position()));
    assertEquals(2, r.refCnt(), "pinned while the bytes wait to be written");
    bytes.written().run();
    assertEquals(1, r.refCnt());
    r.close();
  }

  @Test
  void refusalsAreTypedAndPinNothing() {
    RegionTable table = new RegionTable();
    Region mine = region(table, PEER, 100);
    Region others = region(table, PEER + 1, 100);
    RegionReads reads = new RegionReads(table);
    long key = mine.descriptor().key();
    assertThrows(ReadOutOfBoundsException.class, () -> reads.read(PEER, key, 90, 11));
    assertThrows(ReadOutOfBoundsException.class, () -> reads.read(PEER, key, Long.MAX_VALUE, 1));
    assertEquals(1, mine.refCnt(), "a refused READ leaves the region as it was");
    assertThrows(UnknownKeyException.class, () -> reads.read(PEER, key ^ 1, 0, 1));
    assertThrows(UnknownKeyException.class, () -> reads.read(PEER, others.descriptor().key(), 0, 1),
        "a region kept for another peer is unknown to this one");
    mine.close();
    assertThrows(RegionRevokedException.class, () -> reads.read(PEER, key, 0, 1));
    others.close();
  }
}
