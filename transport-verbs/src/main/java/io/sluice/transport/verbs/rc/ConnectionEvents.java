package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.RdmaCmEvent;

/**
 * What an rdma_cm event means for a connection that is already established (opened or
 * accepted): ESTABLISHED confirms it, every other event (DISCONNECTED, but also
 * UNREACHABLE, CONNECT_ERROR, REJECTED, DEVICE_REMOVAL, ADDR_CHANGE, TIMEWAIT_EXIT...) ends it,
 * so that its queue pair, completion entries and posted buffers are freed. Stateless.
 */
public final class ConnectionEvents {
  private ConnectionEvents() {}

  /** Whether {@code event} (an RdmaCmEvent.EventType ordinal) ends an established connection. */
  public static boolean endsConnection(int event) {
    return event != PreparedConnection.Events.ESTABLISHED;
  }

  static String name(int event) {
    RdmaCmEvent.EventType[] all = RdmaCmEvent.EventType.values();
    return event >= 0 && event < all.length ? all[event].name() : "event " + event;
  }
}
