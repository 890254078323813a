package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** Stock and Sluice clients on one server at once, and many concurrent clients. */
class MixedClientsTest {
  @Test
  void stockAndSluiceClientsShareOneServerAtOnce() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      RPC.Server server = fixture.startServer(RpcFixture.conf(true));
      EchoTestPB stock = fixture.stockProxy(EchoTestPB.class, RpcFixture.conf(false), server.getListenerAddress());
      EchoTestPB sluice = fixture.proxy(EchoTestPB.class, RpcFixture.conf(true), server);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        Future<String> viaStock = pool.submit(() -> echoAndPath(stock, 200, 1));
        Future<String> viaSluice = pool.submit(() -> echoAndPath(sluice, 200, 2));
        assertEquals("rpc", viaStock.get(60, TimeUnit.SECONDS));
        assertEquals("sluice", viaSluice.get(60, TimeUnit.SECONDS));
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void sixtyFourConcurrentClients() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      RPC.Server server = fixture.startServer(conf);
      List<EchoTestPB> clients = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        // Every eighth client is another user, so several connections are in use at once.
        UserGroupInformation user = UserGroupInformation.createRemoteUser("user" + (i % 8));
        clients.add(fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(), user));
      }
      ExecutorService pool = Executors.newFixedThreadPool(64);
      try {
        List<Future<String>> results = new ArrayList<>();
        for (int i = 0; i < clients.size(); i++) {
          EchoTestPB client = clients.get(i);
          int seed = i;
          results.add(pool.submit(() -> echoAndPath(client, 20, seed)));
        }
        for (Future<String> r : results) {
          assertEquals("sluice", r.get(120, TimeUnit.SECONDS));
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void proxiesOfOneAddressProtocolAndUserShareAConnection() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      // A setting no other test uses, so this test's client context is its own: another test's
      // connections in a shared one could close as idle between the counts below.
      conf.set("sluice.transport.maxRequestsInFlight", "62");
      RPC.Server server = fixture.startServer(conf);
      UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
      UserGroupInformation bob = UserGroupInformation.createRemoteUser("bob");
      EchoTestPB a1 = fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(), alice);
      EchoTestPB a2 = fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(), alice);
      EchoTestPB b1 = fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(), bob);
      ClientContext context = ClientContexts.acquire(EngineSettings.from(conf));
      try {
        a1.callContext(null, EmptyProto.getDefaultInstance());
        a2.callContext(null, EmptyProto.getDefaultInstance());
        assertEquals(1, context.connectionCount());
        assertEquals("bob", b1.callContext(null, EmptyProto.getDefaultInstance()).getRemoteUser());
        assertEquals(2, context.connectionCount());
      } finally {
        ClientContexts.release(context);
      }
    }
  }

  private static String echoAndPath(EchoTestPB client, int calls, int seed) throws Exception {
    Random random = new Random(seed);
    for (int i = 0; i < calls; i++) {
      byte[] payload = new byte[random.nextInt(8192)];
      random.nextBytes(payload);
      byte[] back = client.echo(null, EchoRequestProto.newBuilder().setPayload(ByteString.copyFrom(payload)).build())
          .getPayload().toByteArray();
      assertArrayEquals(payload, back);
    }
    return client.callContext(null, EmptyProto.getDefaultInstance()).getPath();
  }
}
