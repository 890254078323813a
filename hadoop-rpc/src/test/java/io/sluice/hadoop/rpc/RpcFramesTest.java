package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.hadoop.rpc.RpcFrames.Call;
import io.sluice.hadoop.rpc.RpcFrames.Inline;
import io.sluice.hadoop.rpc.RpcFrames.MalformedFrameException;
import io.sluice.hadoop.rpc.RpcFrames.Release;
import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.hadoop.rpc.RpcFrames.Response;
import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Every frame survives encode and decode; bad bytes are refused with MalformedFrameException. */
class RpcFramesTest {
  private static final RemoteDescriptor DESCRIPTOR = new RemoteDescriptor(0x1234L, 0, 1 << 20, 0x5678L);

  @Test
  void callWithInlineBodyRoundTrips() throws Exception {
    byte[] clientId = new byte[16];
    clientId[3] = 9;
    Call call = new Call(42, 3, clientId, "org.example.ProtocolPB", "carol", "dave", "10.0.0.7", 40123,
        new long[] {5, 6}, new Inline(ByteBuffer.wrap(new byte[] {1, 2, 3})));
    Call back = (Call) RpcFrames.decodeRequest(RpcFrames.encode(call));
    assertEquals(42, back.callId());
    assertEquals(3, back.retryCount());
    assertArrayEquals(clientId, back.clientId());
    assertEquals("org.example.ProtocolPB", back.protocol());
    assertEquals("carol", back.user());
    assertEquals("dave", back.realUser());
    assertEquals("10.0.0.7", back.callerHost());
    assertEquals(40123, back.callerPort());
    assertArrayEquals(new long[] {5, 6}, back.released());
    Inline body = assertInstanceOf(Inline.class, back.body());
    byte[] bytes = new byte[body.length()];
    body.bytes().get(bytes);
    assertArrayEquals(new byte[] {1, 2, 3}, bytes);
  }

  @Test
  void callWrittenInPlaceIsTheSameFrameAsAnEncodedCall() throws Exception {
    byte[] clientId = new byte[16];
    clientId[0] = 4;
    RpcFrames.CallerFields caller = new RpcFrames.CallerFields(clientId, "org.example.ProtocolPB", "carol", null,
        "10.0.0.7", 40123);
    ByteBuffer inPlace = RpcFrames.inlineCall(8, 1, caller, new long[] {11}, 4);
    inPlace.put(new byte[] {9, 8, 7, 6}).flip();
    ByteBuffer encoded = RpcFrames.encode(new Call(8, 1, clientId, "org.example.ProtocolPB", "carol", null,
        "10.0.0.7", 40123, new long[] {11}, new Inline(ByteBuffer.wrap(new byte[] {9, 8, 7, 6}))));
    assertEquals(encoded, inPlace);
    Call back = (Call) RpcFrames.decodeRequest(inPlace);
    assertEquals(8, back.callId());
    assertNull(back.realUser());
    assertEquals(4, back.body().length());
    assertThrows(IllegalArgumentException.class,
        () -> RpcFrames.inlineCall(1, 0, caller, new long[RpcFrames.MAX_RELEASED + 1], 0));
  }

  @Test
  void callWithRemoteBodyAndNoRealUserRoundTrips() throws Exception {
    Call call = new Call(1, 0, new byte[16], "p", "u", null, "h", 1, new long[0], new Remote(DESCRIPTOR, 1000, 0));
    Call back = (Call) RpcFrames.decodeRequest(RpcFrames.encode(call));
    assertNull(back.realUser());
    assertEquals(new Remote(DESCRIPTOR, 1000, 0), back.body());
  }

  @Test
  void releaseAndResponsesRoundTrip() throws Exception {
    Release release = (Release) RpcFrames.decodeRequest(RpcFrames.encode(new Release(new long[] {77, -1})));
    assertArrayEquals(new long[] {77, -1}, release.released());
    assertThrows(IllegalArgumentException.class, () -> new Release(new long[RpcFrames.MAX_RELEASED + 1]));
    Response remote = RpcFrames.decodeResponse(RpcFrames.encode(Response.ok(new Remote(DESCRIPTOR, 5, 9))));
    assertEquals(new Remote(DESCRIPTOR, 5, 9), remote.body());
    Response error = RpcFrames.decodeResponse(RpcFrames.encode(Response.error("x.Y", "why\nstack", true)));
    assertEquals("x.Y", error.errorClass());
    assertEquals("why\nstack", error.errorMessage());
    assertEquals(true, error.fatal());
  }

  @Test
  void badBytesAreRefused() {
    ByteBuffer good = RpcFrames.encode(new Release(new long[] {1}));
    byte[] wrongMagic = new byte[good.remaining()];
    good.duplicate().get(wrongMagic);
    wrongMagic[0] ^= 1;
    assertThrows(MalformedFrameException.class, () -> RpcFrames.decodeRequest(ByteBuffer.wrap(wrongMagic)));
    byte[] trailing = new byte[good.remaining() + 1];
    good.duplicate().get(trailing, 0, good.remaining());
    assertThrows(MalformedFrameException.class, () -> RpcFrames.decodeRequest(ByteBuffer.wrap(trailing)));
    assertThrows(MalformedFrameException.class, () -> RpcFrames.decodeResponse(ByteBuffer.allocate(3)));
    // A remote body longer than its region.
    ByteBuffer lying = RpcFrames.encode(Response.ok(new Remote(DESCRIPTOR, 5, 9)));
    lying.putInt(6 + 1 + RemoteDescriptor.ENCODED_LENGTH, (1 << 20) + 1);
    assertThrows(MalformedFrameException.class, () -> RpcFrames.decodeResponse(lying));
  }
}
