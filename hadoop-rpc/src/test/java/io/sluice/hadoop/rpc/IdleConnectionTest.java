package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import io.sluice.transport.Eventually;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.junit.jupiter.api.Test;

/** Connections without calls for ipc.client.connection.maxidletime are closed, and reopened on demand. */
class IdleConnectionTest {
  @Test
  void idleConnectionsAreClosedAndReopened() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      // Long enough that the connection a call opened is still there when the test looks, however
      // loaded the machine; short enough to wait out.
      conf.setInt("ipc.client.connection.maxidletime", 1_000);
      // A setting no other test uses, so this test's client context is its own.
      conf.set("sluice.transport.maxRequestsInFlight", "63");
      RPC.Server server = fixture.startServer(conf);
      EchoTestPB proxy = fixture.proxy(EchoTestPB.class, conf, server);
      ClientContext context = ClientContexts.acquire(EngineSettings.from(conf));
      try {
        proxy.callContext(null, EmptyProto.getDefaultInstance());
        assertEquals(1, context.connectionCount());
        Eventually.reaches("connections of the client context, once idle", 0, context::connectionCount);
        assertEquals("sluice", proxy.callContext(null, EmptyProto.getDefaultInstance()).getPath());
        assertTrue(context.connectionCount() <= 1);
      } finally {
        ClientContexts.release(context);
      }
    }
  }
}
