package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.RdmaCmEvent;
import org.junit.jupiter.api.Test;

/** Every rdma_cm event but ESTABLISHED ends an established (opened or accepted) connection. */
class ConnectionEventsTest {

  @Test
  void onlyEstablishedKeepsAConnection() {
    for (RdmaCmEvent.EventType type : RdmaCmEvent.EventType.values()) {
      boolean ends = ConnectionEvents.endsConnection(type.ordinal());
      if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED) {
        assertFalse(ends, type.name());
      } else {
        assertTrue(ends, type.name() + " must end the connection");
      }
    }
  }

  @Test
  void theErrorsAPeerCanCauseEndIt() {
    for (RdmaCmEvent.EventType type : new RdmaCmEvent.EventType[] {
        RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE, RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR,
        RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED, RdmaCmEvent.EventType.RDMA_CM_EVENT_DEVICE_REMOVAL}) {
      assertTrue(ConnectionEvents.endsConnection(type.ordinal()), type.name());
    }
  }
}
