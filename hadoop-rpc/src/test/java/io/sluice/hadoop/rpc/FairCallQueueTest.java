package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.CallContextProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.FairCallQueue;
import org.apache.hadoop.ipc.RPC;
import org.junit.jupiter.api.Test;

/** Transport calls go through a FairCallQueue with its scheduler, as TCP calls do. */
class FairCallQueueTest {
  @Test
  void transportCallsAreScheduledByTheFairCallQueue() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      // The server binds port 0, so its ipc namespace is "ipc.0".
      conf.setClass("ipc.0.callqueue.impl", FairCallQueue.class, java.util.concurrent.BlockingQueue.class);
      conf.setClass("ipc.0.scheduler.impl", ByUserScheduler.class, org.apache.hadoop.ipc.RpcScheduler.class);
      conf.setInt("ipc.0.scheduler.priority.levels", 2);
      RPC.Server server = fixture.startServer(conf);
      for (String name : new String[] {"heavy", "light"}) {
        EchoTestPB proxy = fixture.proxyAs(name, conf, server);
        int calls = name.equals("heavy") ? 20 : 1;
        CallContextProto last = null;
        for (int i = 0; i < calls; i++) {
          last = proxy.callContext(null, EmptyProto.getDefaultInstance());
        }
        assertEquals("sluice", last.getPath());
        assertEquals(name, last.getRemoteUser());
        assertEquals(name.equals("heavy") ? 1 : 0, last.getPriority(), "the scheduler's level for " + name);
      }
      assertTrue(ByUserScheduler.SCHEDULED.containsAll(java.util.List.of("heavy", "light")), "scheduled users");
    }
  }
}
