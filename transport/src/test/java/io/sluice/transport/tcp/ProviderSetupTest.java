package io.sluice.transport.tcp;

import static io.sluice.transport.TransportTestSupport.assertFailsWith;
import static io.sluice.transport.TransportTestSupport.await;
import static io.sluice.transport.TransportTestSupport.message;
import static io.sluice.transport.TransportTestSupport.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportTestSupport;
import io.sluice.transport.UnknownKeyException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The hook that lets another provider run on the tcp transport: VERBS_SETUP frames reach the
 * installed {@link ProviderSetup} (never the application's handler), its exceptions reach the
 * requester typed by their ERROR code, and a transport without the hook refuses set-up without
 * dropping the connection.
 */
@Timeout(60)
class ProviderSetupTest {
  private static TransportConfig config() {
    Map<String, String> m = new HashMap<>(TransportTestSupport.baseConfig("tcp", "/dev/shm"));
    m.put("sluice.transport.shm.enabled", "false");
    return TransportConfig.of(m);
  }

  @Test
  void setupFramesReachTheHookAndNotTheHandler() throws Exception {
    AtomicInteger handlerCalls = new AtomicInteger();
    AtomicLong seenPeer = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<java.net.InetAddress> seenAddress =
        new java.util.concurrent.atomic.AtomicReference<>();
    MessageHandler echo = (peer, request) -> {
      handlerCalls.incrementAndGet();
      return CompletableFuture.completedFuture(message("ok"));
    };
    ProviderSetup setup = (peer, address, request) -> {
      seenPeer.set(peer);
      seenAddress.set(address);
      byte op = request.get();
      return switch (op) {
        case 1 -> ByteBuffer.wrap(("echo:" + StandardCharsets.UTF_8.decode(request)).getBytes(StandardCharsets.UTF_8));
        case 2 -> throw new RegionRevokedException("revoked here");
        case 3 -> throw new UnknownKeyException("unknown here");
        default -> ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD + 1);
      };
    };
    try (Transport server = TcpTransportProvider.openCarrier(config(), echo, setup);
        Transport client = TcpTransportProvider.tcp().open(config(), MessageHandler.REJECT_ALL);
        Connection c = await(client.connect(server.localAddress()))) {
      ByteBuffer reply = await(TcpTransportProvider.setupRequest(c, request(1, "abc")));
      assertEquals("echo:abc", StandardCharsets.UTF_8.decode(reply).toString());
      assertEquals(client.nodeId(), seenPeer.get());
      assertTrue(seenAddress.get().isLoopbackAddress(), "the hook is told where the peer connects from: " + seenAddress.get());
      assertFailsWith(RegionRevokedException.class, TcpTransportProvider.setupRequest(c, request(2, "")));
      assertFailsWith(UnknownKeyException.class, TcpTransportProvider.setupRequest(c, request(3, "")));
      assertFailsWith(ProtocolException.class, TcpTransportProvider.setupRequest(c, request(4, "")));
      assertEquals(0, handlerCalls.get(), "set-up frames must not reach the message handler");
      assertTrue(c.isOpen());
      assertEquals("ok", text(await(c.request(message("hi")))));
      assertThrows(IllegalArgumentException.class,
          () -> TcpTransportProvider.setupRequest(c, ByteBuffer.allocate(Frames.MAX_CONTROL_PAYLOAD + 1)));
    }
  }

  @Test
  void plainTcpRefusesSetupAndKeepsTheConnection() throws Exception {
    try (Transport server = TcpTransportProvider.tcp().open(config(),
            (peer, request) -> CompletableFuture.completedFuture(message("still here")));
        Transport client = TcpTransportProvider.tcp().open(config(), MessageHandler.REJECT_ALL);
        Connection c = await(client.connect(server.localAddress()))) {
      assertFailsWith(ProtocolException.class, TcpTransportProvider.setupRequest(c, request(1, "x")));
      assertTrue(c.isOpen());
      assertEquals("still here", text(await(c.request(message("hi")))));
    }
  }

  private static ByteBuffer request(int op, String body) {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    return ByteBuffer.allocate(1 + b.length).put((byte) op).put(b).flip();
  }
}
