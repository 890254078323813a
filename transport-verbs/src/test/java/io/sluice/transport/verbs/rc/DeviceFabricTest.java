package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.transport.verbs.rc.DeviceQuery.Fabric;
import org.junit.jupiter.api.Test;

/** The fabric follows from the transport type and the port's link layer as libibverbs numbers them. */
class DeviceFabricTest {

  @Test
  void iwarpIsTheIwarpTransportWhateverTheLinkLayer() {
    assertEquals(Fabric.IWARP, Fabric.of(1, 2)); // siw, cxgb4, irdma in iWARP mode
    assertEquals(Fabric.IWARP, Fabric.of(1, 0));
  }

  @Test
  void theInfinibandTransportIsRoceOnEthernetAndInfinibandOtherwise() {
    assertEquals(Fabric.ROCE, Fabric.of(0, 2)); // rxe, mlx5 on Ethernet
    assertEquals(Fabric.INFINIBAND, Fabric.of(0, 1));
    assertEquals(Fabric.INFINIBAND, Fabric.of(0, 0)); // link layer unspecified: older InfiniBand drivers
  }

  @Test
  void otherTransportsAreNamedSo() {
    assertEquals(Fabric.OTHER, Fabric.of(2, 2)); // usNIC
    assertEquals(Fabric.OTHER, Fabric.of(4, 0)); // unspecified
    assertEquals("iWARP", Fabric.IWARP.toString());
    assertEquals("RoCE", Fabric.ROCE.toString());
  }
}
