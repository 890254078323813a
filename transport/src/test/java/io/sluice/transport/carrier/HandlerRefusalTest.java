package io.sluice.transport.carrier;

import static io.sluice.transport.TransportTestSupport.SECRET;
import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportHarness;
import io.sluice.transport.TransportOption;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RawFrameSocket;
import io.sluice.transport.wire.ScriptedServer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A message handler's refusal for load on the wire (docs/protocol.md 4.2, 4.3): the server
 * answers it with ERROR code EXHAUSTED (9) and the handler's message as the text, any other
 * failure with HANDLER_FAILED (4); the client fails the request by the code, whatever the text.
 */
class HandlerRefusalTest {
  /** How a grant refusal's text began while the refusal travelled as HANDLER_FAILED. */
  private static final String OLD_REFUSAL = "RESOURCE_EXHAUSTED: this peer holds 1024 unredeemed data-plane grants";

  private final TransportHarness harness = new TransportHarness("tcp",
      Map.of(TransportOption.SHM_ENABLED.key(), "false"));

  @AfterEach
  void close() {
    harness.close();
  }

  @Test
  void theServerAnswersARefusalForLoadWithCodeNineAndTheHandlersMessage() throws Exception {
    MessageHandler handler = (peer, request) -> CompletableFuture.failedFuture(text(request).equals("busy")
        ? new ResourceExhaustedException("this peer holds 3 streams")
        : new IllegalStateException(OLD_REFUSAL));
    Transport server = harness.open(handler);
    try (RawFrameSocket raw = new RawFrameSocket(server.localAddress())) {
      assertEquals(FrameType.AUTH_OK, raw.authenticate(SECRET, NodeIdentity.generate()).orElseThrow().type());
      raw.send(FrameType.REQUEST, 1, message("busy"));
      RawFrameSocket.Frame busy = raw.expect(FrameType.ERROR);
      assertEquals(1, busy.header().correlationId());
      assertEquals(9, busy.payload()[0], "the code byte");
      assertEquals(ErrorCode.EXHAUSTED, busy.errorCode());
      assertEquals("this peer holds 3 streams", busy.errorMessage());
      raw.send(FrameType.REQUEST, 2, message("reads like busy"));
      RawFrameSocket.Frame failed = raw.expect(FrameType.ERROR);
      assertEquals(4, failed.payload()[0], "the code byte");
      assertEquals("java.lang.IllegalStateException: " + OLD_REFUSAL, failed.errorMessage());
    }
  }

  @Test
  void theClientFailsARequestByTheErrorsCodeWhateverItsText() throws Exception {
    try (ScriptedServer server = ScriptedServer.authenticated(peer -> {
      peer.send(FrameType.ERROR, peer.expect(FrameType.REQUEST).header().correlationId(),
          error(ErrorCode.EXHAUSTED, "all 8 threads are busy"));
      peer.send(FrameType.ERROR, peer.expect(FrameType.REQUEST).header().correlationId(),
          error(ErrorCode.HANDLER_FAILED, OLD_REFUSAL));
      peer.send(FrameType.ERROR, peer.expect(FrameType.REQUEST).header().correlationId(),
          error(ErrorCode.EXHAUSTED, ""));
      peer.send(FrameType.RESPONSE, peer.expect(FrameType.REQUEST).header().correlationId(), message("served"));
      while (peer.next().isPresent()) {
        // until the client hangs up
      }
    })) {
      Transport client = harness.open(MessageHandler.REJECT_ALL);
      try (Connection c = await(client.connect(server.address()))) {
        ResourceExhaustedException busy = assertFailsWith(ResourceExhaustedException.class, c.request(message("a")));
        assertEquals("peer: all 8 threads are busy", busy.getMessage());
        RemoteHandlerException failed = assertFailsWith(RemoteHandlerException.class, c.request(message("b")));
        assertEquals("peer: " + OLD_REFUSAL, failed.getMessage());
        assertFailsWith(ResourceExhaustedException.class, c.request(message("c")));
        assertEquals("served", text(await(c.request(message("d")))));
      }
    }
  }

  private static ByteBuffer error(ErrorCode code, String text) {
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(3 + utf8.length).put(code.id()).putShort((short) utf8.length).put(utf8).flip();
  }
}
