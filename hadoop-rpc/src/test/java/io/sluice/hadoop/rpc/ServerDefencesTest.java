package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoTestService;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.SleepRequestProto;
import io.sluice.transport.Connection;
import io.sluice.transport.Eventually;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.Transports;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.apache.hadoop.thirdparty.protobuf.CodedOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a server does for callers that hold the secret but should get no more than a stock server
 * would give them: refused callers' bodies are never READ, a full call queue stalls no transport
 * thread, request bodies in memory are bounded, connections back to callers do not outlive their
 * use, and a response body is READable by its caller alone, under a key of its own.
 */
@Timeout(120)
class ServerDefencesTest {
  private static final int MIB = 1 << 20;

  private static TransportCallService.Stats stats(RPC.Server server) {
    return ((SluiceRpcServer) server).transportStats().orElseThrow();
  }

  private static EchoRequestProto payload(int bytes) {
    return EchoRequestProto.newBuilder().setPayload(ByteString.copyFrom(new byte[bytes])).build();
  }

  @Test
  void theBodyOfARefusedCallerIsNeverRead() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      RpcFixture.AclServer server = fixture.startServerServingOnly("alice");
      EchoTestPB asBob = fixture.proxyAs("bob", server);
      RpcFixture.assertUnauthorized(() -> asBob.echo(null, payload(MIB)));
      assertEquals(1, stats(server.server()).calls());
      assertEquals(0, stats(server.server()).requestBodiesRead(), "the server READ the body of a caller it refused");
    }
  }

  @Test
  void aFullCallQueueStallsNoSelectorThread() throws Exception {
    Configuration conf = RpcFixture.conf(true);
    conf.setInt("sluice.transport.ioThreads", 1);
    conf.setInt("ipc.server.handler.queue.size", 1);
    ExecutorService callers = Executors.newCachedThreadPool();
    try (RpcFixture fixture = new RpcFixture()) {
      RPC.Server server = new RPC.Builder(conf).setProtocol(EchoTestPB.class)
          .setInstance(EchoTestService.newReflectiveBlockingService(new EchoTestImpl()))
          .setBindAddress("127.0.0.1").setPort(0).setNumHandlers(1).build();
      server.start();
      try {
        EchoTestPB proxy = fixture.proxy(EchoTestPB.class, conf, server);
        SleepRequestProto longSleep = SleepRequestProto.newBuilder().setMillis(60_000).build();
        // One call holds the only handler, one fills the queue of one; the third, whose body is
        // READ, must then wait for room in the queue.
        callers.submit(() -> proxy.sleep(null, longSleep));
        Eventually.holds("the first call reached the handler", () -> someThreadRuns("EchoTestImpl", "sleep", false));
        callers.submit(() -> proxy.sleep(null, longSleep));
        Eventually.holds("the second call is queued", () -> server.getCallQueueLen() == 1);
        callers.submit(() -> proxy.echo(null, payload(MIB)));
        Eventually.holds("the third call waits for room in the call queue",
            () -> stats(server).requestBodiesRead() == 1 && someThreadRuns("SluiceCalls", "queue", true));

        NodeAddress address = ((SluiceRpcServer) server).transportAddress().orElseThrow();
        TransportConfig probe = TransportConfig.of(Map.of("sluice.transport.secret", RpcFixture.SECRET,
            "sluice.transport.provider", "tcp", "sluice.transport.bindHost", "127.0.0.1",
            "sluice.transport.connectTimeoutMs", "5000"));
        try (Transport t = Transports.open(probe, MessageHandler.REJECT_ALL)) {
          Connection c = t.connect(address).get(10, TimeUnit.SECONDS);
          assertTrue(c.isOpen(), "a new connection to the server's only selector thread was not served");
          c.close();
        }
      } finally {
        server.stop();
      }
    } finally {
      callers.shutdownNow();
    }
  }

  /** Whether a thread is in {@code method} of a class named {@code simpleClass} (and blocked there, if asked). */
  private static boolean someThreadRuns(String simpleClass, String method, boolean blocked) {
    for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
      Thread.State state = t.getKey().getState();
      if (blocked && state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
        continue;
      }
      for (StackTraceElement frame : t.getValue()) {
        if (frame.getClassName().endsWith("." + simpleClass) && frame.getMethodName().equals(method)) {
          return true;
        }
      }
    }
    return false;
  }

  @Test
  void requestBodiesInMemoryStayWithinTheirBound() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      conf.setInt("ipc.maximum.data.length", 2 * MIB);
      conf.set("sluice.rpc.server.maxIncomingBodyBytes", "2m");
      RPC.Server server = fixture.startServer(conf);
      EchoTestPB proxy = fixture.proxy(EchoTestPB.class, conf, server);
      ExecutorService callers = Executors.newFixedThreadPool(6);
      try {
        List<Future<Integer>> echoes = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
          echoes.add(callers.submit(() -> proxy.echo(null, payload(3 * MIB / 2)).getPayload().size()));
        }
        for (Future<Integer> echo : echoes) {
          assertEquals(3 * MIB / 2, echo.get(60, TimeUnit.SECONDS));
        }
      } finally {
        callers.shutdownNow();
      }
      assertEquals(12, stats(server).requestBodiesRead());
      assertTrue(stats(server).peakIncomingBodyBytes() <= 2 * MIB,
          "request bodies held at once: " + stats(server).peakIncomingBodyBytes() + " bytes");
    }
  }

  @Test
  void connectionsBackToCallersAreClosedOnceIdle() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      conf.set("sluice.rpc.server.callerConnectionIdleMs", "200");
      RPC.Server server = fixture.startServer(conf);
      EchoTestPB proxy = fixture.proxy(EchoTestPB.class, conf, server);
      assertEquals(MIB, proxy.echo(null, payload(MIB)).getPayload().size());
      assertEquals(1, stats(server).requestBodiesRead());
      Eventually.reaches("connections back to the caller, once idle", 0, () -> stats(server).callerConnections());
      assertEquals(MIB, proxy.echo(null, payload(MIB)).getPayload().size(), "a later body is READ over a new one");
    }
  }

  @Test
  void aResponseBodyIsReadableByItsCallerAloneUnderAKeyOfItsOwn() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      RPC.Server server = fixture.startServer(RpcFixture.conf(true));
      NodeAddress address = ((SluiceRpcServer) server).transportAddress().orElseThrow();
      TransportConfig config = TransportConfig.of(Map.of("sluice.transport.secret", RpcFixture.SECRET,
          "sluice.transport.provider", "tcp", "sluice.transport.bindHost", "127.0.0.1"));
      try (Transport caller = Transports.open(config, MessageHandler.REJECT_ALL);
          Transport other = Transports.open(config, MessageHandler.REJECT_ALL);
          Connection c = caller.connect(address).get(10, TimeUnit.SECONDS);
          Connection o = other.connect(address).get(10, TimeUnit.SECONDS);
          RegisteredRegion landing = caller.allocate(2 * MIB);
          RegisteredRegion otherLanding = other.allocate(2 * MIB)) {
        RpcFrames.Remote first = echoOverRaw(c, caller, 1);
        ExecutionException stolen = assertThrows(ExecutionException.class,
            () -> o.read(first.descriptor(), 0, otherLanding, 0, first.length()).get(10, TimeUnit.SECONDS));
        assertTrue(stolen.getCause() instanceof io.sluice.transport.TransportException, String.valueOf(stolen.getCause()));
        c.read(first.descriptor(), 0, landing, 0, first.length()).get(10, TimeUnit.SECONDS);

        c.request(RpcFrames.encode(new RpcFrames.Release(new long[] {first.id()}))).get(10, TimeUnit.SECONDS);
        RpcFrames.Remote second = echoOverRaw(c, caller, 2);
        assertNotEquals(first.descriptor().key(), second.descriptor().key(), "a released body's key was used again");
        assertThrows(ExecutionException.class,
            () -> c.read(first.descriptor(), 0, landing, 0, first.length()).get(10, TimeUnit.SECONDS),
            "a released body's key still reads");
        c.read(second.descriptor(), 0, landing, 0, second.length()).get(10, TimeUnit.SECONDS);
      }
    }
  }

  /** An echo of 1 MiB sent as a raw call frame; returns the response body's descriptor. */
  private static RpcFrames.Remote echoOverRaw(Connection c, Transport caller, int callId) throws Exception {
    RequestHeaderProto header = RequestHeaderProto.newBuilder().setMethodName("echo")
        .setDeclaringClassProtocolName("io.sluice.hadoop.rpc.EchoTestPB").setClientProtocolVersion(1).build();
    EchoRequestProto request = payload(MIB);
    byte[] body = new byte[CodedOutputStream.computeUInt32SizeNoTag(header.getSerializedSize())
        + header.getSerializedSize() + CodedOutputStream.computeUInt32SizeNoTag(request.getSerializedSize())
        + request.getSerializedSize()];
    CodedOutputStream out = CodedOutputStream.newInstance(body);
    out.writeUInt32NoTag(header.getSerializedSize());
    header.writeTo(out);
    out.writeUInt32NoTag(request.getSerializedSize());
    request.writeTo(out);
    out.flush();
    // Inline although large: the server READs nothing of this caller, it only answers.
    RpcFrames.Call call = new RpcFrames.Call(callId, 0, new byte[16], "io.sluice.hadoop.rpc.EchoTestPB",
        UserGroupInformation.getCurrentUser().getShortUserName(), null, "127.0.0.1", caller.localAddress().port(),
        new long[0], new RpcFrames.Inline(ByteBuffer.wrap(body)));
    RpcFrames.Response response = RpcFrames.decodeResponse(c.request(RpcFrames.encode(call)).get(10, TimeUnit.SECONDS));
    assertTrue(response.isOk(), String.valueOf(response));
    return assertInstanceOf(RpcFrames.Remote.class, response.body());
  }
}
