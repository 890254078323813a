package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.CallContextProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.FailRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.SleepRequestProto;
import io.sluice.transport.Eventually;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RpcNoSuchProtocolException;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Calls of the test protocol over the transport against one real server on loopback. */
class EchoOverTransportTest {
  private static RpcFixture fixture;
  private static RPC.Server server;
  private static Configuration conf;
  private static EchoTestPB proxy;

  @BeforeAll
  static void start() throws IOException {
    fixture = new RpcFixture();
    conf = RpcFixture.conf(true);
    server = fixture.startServer(conf);
    proxy = fixture.proxy(EchoTestPB.class, conf, server);
  }

  @AfterAll
  static void stop() {
    fixture.close();
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 4096, 60_000, 70_000, 1 << 20, 16 << 20, 64 << 20})
  void echoesPayloadsOfEverySize(int size) throws Exception {
    byte[] payload = new byte[size];
    new Random(size).nextBytes(payload);
    long readsBefore = stats().requestBodiesRead();
    long publishedBefore = stats().responseBodiesPublished();
    ByteString back = proxy.echo(null, EchoRequestProto.newBuilder().setPayload(ByteString.copyFrom(payload)).build())
        .getPayload();
    assertArrayEquals(payload, back.toByteArray());
    // Bodies carry a few bytes of header besides the payload.
    boolean large = size > Integer.parseInt(SluiceRpcOption.READ_THRESHOLD_BYTES.defaultValue());
    assertEquals(large ? 1 : 0, stats().requestBodiesRead() - readsBefore, "request bodies READ by the server");
    assertEquals(large ? 1 : 0, stats().responseBodiesPublished() - publishedBefore, "response bodies READ by the client");
  }

  @Test
  void responseBodiesAreReleasedByTheCaller() throws Exception {
    byte[] payload = new byte[1 << 20];
    for (int i = 0; i < 3; i++) {
      proxy.echo(null, EchoRequestProto.newBuilder().setPayload(ByteString.copyFrom(payload)).build());
    }
    // The caller sends RELEASE after its READ, without waiting for the answer: wait for it to land.
    Eventually.reaches("response bodies the server still holds", 0, () -> stats().responseBodiesPending());
  }

  @Test
  void callsRunOnTheServersHandlersAsTheCallingUser() throws Exception {
    long before = server.getRpcMetrics().getProcessingSampleCount();
    CallContextProto context = proxy.callContext(null, EmptyProto.getDefaultInstance());
    assertEquals("sluice", context.getPath());
    assertEquals(org.apache.hadoop.security.UserGroupInformation.getCurrentUser().getShortUserName(),
        context.getRemoteUser());
    assertEquals(16, context.getClientId().size());
    assertEquals("127.0.0.1", context.getRemoteAddress());
    assertTrue(server.getRpcMetrics().getProcessingSampleCount() > before, "RPC processing metrics count the call");
  }

  @Test
  void checkedExceptionArrivesAsRemoteExceptionAndUnwraps() {
    ServiceException e = assertThrows(ServiceException.class, () -> proxy.fail(null,
        FailRequestProto.newBuilder().setKind("checked").setMessage("no such echo").build()));
    RemoteException remote = assertInstanceOf(RemoteException.class, e.getCause());
    assertEquals(EchoCheckedException.class.getName(), remote.getClassName());
    IOException unwrapped = remote.unwrapRemoteException(EchoCheckedException.class);
    assertInstanceOf(EchoCheckedException.class, unwrapped);
    assertTrue(unwrapped.getMessage().startsWith("no such echo"), unwrapped.getMessage());
  }

  @Test
  void uncheckedExceptionArrivesAsRemoteException() {
    ServiceException e = assertThrows(ServiceException.class, () -> proxy.fail(null,
        FailRequestProto.newBuilder().setKind("unchecked").setMessage("broken invariant").build()));
    RemoteException remote = assertInstanceOf(RemoteException.class, e.getCause());
    assertEquals(IllegalStateException.class.getName(), remote.getClassName());
    assertTrue(remote.getMessage().startsWith("broken invariant"), remote.getMessage());
  }

  @Test
  void slowCallHitsTheClientTimeout() throws Exception {
    // A timeout that an ordinary call meets however loaded the machine (the call after the timed-out
    // one must), and a call that outlasts it many times over (the server's stop interrupts it).
    Configuration timeoutConf = new Configuration(conf);
    timeoutConf.setInt("ipc.client.rpc-timeout.ms", 2_000);
    EchoTestPB impatient = fixture.proxy(EchoTestPB.class, timeoutConf, server.getListenerAddress(),
        org.apache.hadoop.security.UserGroupInformation.getCurrentUser());
    ServiceException e = assertThrows(ServiceException.class,
        () -> impatient.sleep(null, SleepRequestProto.newBuilder().setMillis(60_000).build()));
    assertInstanceOf(SocketTimeoutException.class, e.getCause());
    // The connection stays usable after a timed-out call.
    assertEquals("sluice", impatient.callContext(null, EmptyProto.getDefaultInstance()).getPath());
  }

  @Test
  void protocolNeverRegisteredIsRefusedByName() throws Exception {
    UnregisteredPB unregistered = fixture.proxy(UnregisteredPB.class, conf, server);
    ServiceException e = assertThrows(ServiceException.class,
        () -> unregistered.callContext(null, EmptyProto.getDefaultInstance()));
    RemoteException remote = assertInstanceOf(RemoteException.class, e.getCause());
    assertEquals(RpcNoSuchProtocolException.class.getName(), remote.getClassName());
    assertTrue(remote.getMessage().contains(RPC.getProtocolName(UnregisteredPB.class)), remote.getMessage());
  }

  private static TransportCallService.Stats stats() {
    return ((SluiceRpcServer) server).transportStats().orElseThrow();
  }
}
