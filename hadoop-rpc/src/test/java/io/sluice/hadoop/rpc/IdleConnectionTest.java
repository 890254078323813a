package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.junit.jupiter.api.Test;

/** Connections without calls for ipc.client.connection.maxidletime are closed, and reopened on demand. */
class IdleConnectionTest {
  @Test
  void idleConnectionsAreClosedAndReopened() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      conf.setInt("ipc.client.connection.maxidletime", 100);
      // A setting no other test uses, so this test's client context is its own.
      conf.set("sluice.transport.maxRequestsInFlight", "63");
      RPC.Server server = fixture.startServer(conf);
      EchoTestPB proxy = fixture.proxy(EchoTestPB.class, conf, server);
      ClientContext context = ClientContexts.acquire(EngineSettings.from(conf));
      try {
        proxy.callContext(null, EmptyProto.getDefaultInstance());
        assertEquals(1, context.connectionCount());
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (context.connectionCount() > 0 && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertEquals(0, context.connectionCount(), "the idle connection was not closed within 30 s");
        assertEquals("sluice", proxy.callContext(null, EmptyProto.getDefaultInstance()).getPath());
        assertTrue(context.connectionCount() <= 1);
      } finally {
        ClientContexts.release(context);
      }
    }
  }
}
