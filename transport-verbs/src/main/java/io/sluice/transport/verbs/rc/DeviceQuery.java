package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;

/**
 * What device and fabric a bound rdma_cm id reached, as libibverbs reports it (the library's
 * own entry point beside DiSNI's: the device's node and transport type, ibv_query_device and
 * ibv_query_port). Stateless; thread safe.
 */
public final class DeviceQuery {

  static {
    System.loadLibrary("disni");
  }

  /** The fabric a device speaks: the same verbs and rdma_cm code runs on each. */
  public enum Fabric {
    /** InfiniBand: an InfiniBand transport on an InfiniBand link. */
    INFINIBAND("InfiniBand"),
    /** RoCE: the InfiniBand transport over Ethernet (rxe, ConnectX on Ethernet). */
    ROCE("RoCE"),
    /** iWARP: RDMA over TCP (siw, Chelsio, Intel E810 in iWARP mode). */
    IWARP("iWARP"),
    /** Anything else libibverbs may report (usNIC, unspecified). */
    OTHER("other");

    /** enum ibv_transport_type: IBV_TRANSPORT_IB, IBV_TRANSPORT_IWARP. */
    static final int TRANSPORT_IB = 0;
    static final int TRANSPORT_IWARP = 1;
    /** IBV_LINK_LAYER_ETHERNET (IBV_LINK_LAYER_UNSPECIFIED, 0, is InfiniBand for old devices). */
    static final int LINK_LAYER_ETHERNET = 2;

    private final String label;

    Fabric(String label) {
      this.label = label;
    }

    /** The fabric of a device of {@code transportType} whose port has {@code linkLayer}. */
    public static Fabric of(int transportType, int linkLayer) {
      if (transportType == TRANSPORT_IWARP) {
        return IWARP;
      }
      if (transportType == TRANSPORT_IB) {
        return linkLayer == LINK_LAYER_ETHERNET ? ROCE : INFINIBAND;
      }
      return OTHER;
    }

    @Override
    public String toString() {
      return label;
    }
  }

  /**
   * A device as seen through one of its ports: its name, its node type (enum ibv_node_type:
   * 1 a channel adapter, 4 an RNIC), its transport type, the port's link layer (enum
   * ibv_link_layer), and the most scatter/gather entries one RDMA READ may land in.
   */
  public record Device(String name, int port, int nodeType, int transportType, int linkLayer, int maxSgeRead) {
    /** The fabric, from the transport type and the port's link layer. */
    public Fabric fabric() {
      return Fabric.of(transportType, linkLayer);
    }

    /** One line for the log. */
    public String describe() {
      return name + " port " + port + ": " + fabric() + " (node type " + nodeType + ", transport type "
          + transportType + ", link layer " + linkLayer + ", READ lands in at most " + maxSgeRead
          + " scatter/gather entries)";
    }
  }

  private DeviceQuery() {}

  /** Asks the device {@code id} is bound to (after bindAddr or resolveAddr). */
  public static Device query(RdmaCmId id) throws IOException {
    long handle = handle(id);
    int[] v = query0(handle);
    return new Device(name0(handle), v[4], v[0], v[1], v[2], v[3]);
  }

  static long handle(RdmaCmId id) {
    if (id instanceof com.ibm.disni.verbs.impl.NatObject o) {
      return o.getObjId();
    }
    throw new IllegalArgumentException("not an rdma_cm id of the native library: " + id);
  }

  private static native int[] query0(long id) throws IOException;

  private static native String name0(long id) throws IOException;
}
