package io.sluice.transport.region;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ReaderGrant;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import io.sluice.transport.crypto.PeerIdentities;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A provider that enforces grants itself hears when a peer's last grant goes, and only then. */
class RegionGrantTest {

  @Test
  void theLastWithdrawnGrantOfAPeerIsReported() {
    Region region = new Region(new RemoteDescriptor(1, 0, 16, 99), Transport.GRANTED_ONLY, ByteBuffer.allocateDirect(16),
        null, () -> { }, () -> { }, new PeerIdentities());
    List<Long> withdrawn = new ArrayList<>();
    region.onGrantWithdrawn(withdrawn::add);
    ReaderGrant first = region.allowReader(5);
    ReaderGrant second = region.allowReader(5);
    ReaderGrant other = region.allowReader(6);

    first.close();
    assertTrue(region.readableBy(5));
    assertEquals(List.of(), withdrawn, "peer 5 still holds a grant");
    second.close();
    second.close();
    assertFalse(region.readableBy(5));
    assertEquals(List.of(5L), withdrawn);
    other.close();
    assertEquals(List.of(5L, 6L), withdrawn);
    region.close();
  }

  @Test
  void theDesignatedReaderKeepsAccessWhenItsExtraGrantGoes() {
    Region region = new Region(new RemoteDescriptor(1, 0, 16, 98), 5, ByteBuffer.allocateDirect(16), null, () -> { },
        () -> { }, new PeerIdentities());
    List<Long> withdrawn = new ArrayList<>();
    region.onGrantWithdrawn(withdrawn::add);
    region.allowReader(5).close();
    assertTrue(region.readableBy(5));
    assertEquals(List.of(), withdrawn);
    region.close();
  }
}
