package io.sluice.transport.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.ProtocolException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The byte ids frame types and error codes travel as: fixed by the protocol, so pinned here. */
class WireIdsTest {
  @Test
  void frameTypesKeepTheirIds() throws Exception {
    List<FrameType> inWireOrder = List.of(FrameType.HELLO, FrameType.CHALLENGE, FrameType.AUTH, FrameType.AUTH_OK,
        FrameType.READ_REQUEST, FrameType.READ_RESPONSE, FrameType.REQUEST, FrameType.RESPONSE, FrameType.ERROR,
        FrameType.CONTROL, FrameType.CONTROL_REPLY);
    assertEquals(FrameType.values().length, inWireOrder.size());
    for (int i = 0; i < inWireOrder.size(); i++) {
      assertEquals(i + 1, inWireOrder.get(i).id());
      assertEquals(inWireOrder.get(i), FrameType.fromId((byte) (i + 1)));
    }
    assertEquals("unknown frame type 0", assertThrows(ProtocolException.class, () -> FrameType.fromId((byte) 0))
        .getMessage());
    assertThrows(ProtocolException.class, () -> FrameType.fromId((byte) 12));
    assertThrows(ProtocolException.class, () -> FrameType.fromId((byte) 0xff));
  }

  @Test
  void errorCodesKeepTheirIds() throws Exception {
    List<ErrorCode> inWireOrder = List.of(ErrorCode.UNKNOWN_KEY, ErrorCode.REGION_REVOKED, ErrorCode.OUT_OF_BOUNDS,
        ErrorCode.HANDLER_FAILED, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.AUTHENTICATION_FAILED, ErrorCode.PROTOCOL,
        ErrorCode.UNAVAILABLE, ErrorCode.EXHAUSTED);
    assertEquals(ErrorCode.values().length, inWireOrder.size());
    for (int i = 0; i < inWireOrder.size(); i++) {
      assertEquals(i + 1, inWireOrder.get(i).id());
      assertEquals(inWireOrder.get(i), ErrorCode.fromId((byte) (i + 1)));
    }
    assertThrows(ProtocolException.class, () -> ErrorCode.fromId((byte) 0));
    assertEquals("unknown error code 10", assertThrows(ProtocolException.class, () -> ErrorCode.fromId((byte) 10))
        .getMessage());
  }
}
