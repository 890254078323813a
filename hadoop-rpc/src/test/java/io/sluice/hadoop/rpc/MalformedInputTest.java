package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteHandlerException;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bad bytes at the server: on a raw socket to either listener, and as frames on an authenticated connection. */
class MalformedInputTest {
  private static RpcFixture fixture;
  private static RPC.Server server;
  private static EchoTestPB proxy;

  @BeforeAll
  static void start() throws Exception {
    fixture = new RpcFixture();
    Configuration conf = RpcFixture.conf(true);
    server = fixture.startServer(conf);
    proxy = fixture.proxy(EchoTestPB.class, conf, server);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @Test
  void garbageOnRawSocketsLeavesBothListenersServing() throws Exception {
    NodeAddress transport = ((SluiceRpcServer) server).transportAddress().orElseThrow();
    List<InetSocketAddress> listeners = List.of(
        new InetSocketAddress(transport.host(), transport.port()), server.getListenerAddress());
    for (InetSocketAddress listener : listeners) {
      try (Socket socket = new Socket()) {
        socket.connect(listener, 5_000);
        socket.setSoTimeout(10_000);
        OutputStream out = socket.getOutputStream();
        out.write("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1, 2, 3});
        out.flush();
        InputStream in = socket.getInputStream();
        // The server answers with an error or just closes; either way it must not hang us or itself.
        byte[] sink = new byte[4096];
        while (in.read(sink) >= 0) {
          // drain until the server closes
        }
      } catch (java.net.SocketTimeoutException e) {
        throw new AssertionError(listener + " neither answered nor closed a garbage connection", e);
      } catch (java.net.SocketException e) {
        // reset by the server: fine
      }
    }
    assertEquals("sluice", proxy.callContext(null, EmptyProto.getDefaultInstance()).getPath());
  }

  @Test
  void malformedFramesOnAnAuthenticatedConnectionAreRefusedOneByOne() throws Exception {
    NodeAddress address = ((SluiceRpcServer) server).transportAddress().orElseThrow();
    TransportConfig config = TransportConfig.of(Map.of(
        "sluice.transport.secret", RpcFixture.SECRET, "sluice.transport.provider", "tcp",
        "sluice.transport.bindHost", "127.0.0.1"));
    try (Transport client = Transports.open(config, MessageHandler.REJECT_ALL);
         Connection c = client.connect(address).get(10, TimeUnit.SECONDS)) {
      List<byte[]> frames = List.of(
          new byte[0],
          "not a frame at all".getBytes(StandardCharsets.US_ASCII),
          truncatedCall(),
          unknownType(),
          callWithLyingBodyLength());
      for (byte[] frame : frames) {
        ExecutionException e = assertThrows(ExecutionException.class,
            () -> c.request(ByteBuffer.wrap(frame)).get(10, TimeUnit.SECONDS));
        assertInstanceOf(RemoteHandlerException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("malformed"), e.getCause().getMessage());
      }
      // A well-formed frame whose body is not a protobuf request gets an RPC error, not a dead connection.
      ByteBuffer notProtobuf = RpcFrames.encode(new RpcFrames.Call(1, 0, new byte[16], "io.sluice.hadoop.rpc.EchoTestPB",
          "mallory", null, "127.0.0.1", 1, new long[0], new RpcFrames.Inline(ByteBuffer.wrap(new byte[] {(byte) 0xff, 0x7f}))));
      RpcFrames.Response response = RpcFrames.decodeResponse(c.request(notProtobuf).get(10, TimeUnit.SECONDS));
      assertTrue(!response.isOk() && !response.errorMessage().isEmpty(), String.valueOf(response));
      assertTrue(c.isOpen());
    }
    assertEquals("sluice", proxy.callContext(null, EmptyProto.getDefaultInstance()).getPath());
  }

  private static byte[] truncatedCall() {
    ByteBuffer whole = RpcFrames.encode(new RpcFrames.Call(7, 0, new byte[16], "p", "u", null, "127.0.0.1", 1, new long[0],
        new RpcFrames.Inline(ByteBuffer.wrap(new byte[100]))));
    byte[] cut = new byte[whole.remaining() - 50];
    whole.get(cut);
    return cut;
  }

  private static byte[] unknownType() {
    return ByteBuffer.allocate(6).putInt(RpcFrames.MAGIC).put(RpcFrames.VERSION).put((byte) 99).array();
  }

  private static byte[] callWithLyingBodyLength() {
    ByteBuffer whole = RpcFrames.encode(new RpcFrames.Call(7, 0, new byte[16], "p", "u", null, "127.0.0.1", 1, new long[0],
        new RpcFrames.Inline(ByteBuffer.wrap(new byte[8]))));
    byte[] bytes = new byte[whole.remaining()];
    whole.get(bytes);
    // The inline length sits just before the last 8 body bytes: claim far more than follows.
    ByteBuffer.wrap(bytes).putInt(bytes.length - 12, 1 << 30);
    return bytes;
  }
}
