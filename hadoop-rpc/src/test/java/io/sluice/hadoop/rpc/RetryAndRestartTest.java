package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.CallContextProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.FailFirstRequestProto;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.retry.RetryPolicies;
import org.apache.hadoop.io.retry.RetryPolicy;
import org.apache.hadoop.io.retry.RetryProxy;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.Test;

/** Hadoop's retry machinery over the transport: call ids kept across retries, and a server restart. */
class RetryAndRestartTest {
  @Test
  void retriesKeepCallIdAndClientIdAndCountRetries() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      RPC.Server server = fixture.startServer(conf);
      EchoTestPB raw = fixture.proxy(EchoTestPB.class, conf, server);
      RetryPolicy policy = RetryPolicies.retryUpToMaximumCountWithFixedSleep(5, 10, TimeUnit.MILLISECONDS);
      EchoTestPB retrying = (EchoTestPB) RetryProxy.create(EchoTestPB.class, raw, policy);
      CallContextProto first = retrying.failFirst(null, FailFirstRequestProto.newBuilder().setFailures(2).build());
      assertEquals("sluice", first.getPath());
      assertEquals(2, first.getRetryCount(), "the third attempt is retry 2");
      // The server counted the failures by (client id, call id): all three attempts had the same.
      CallContextProto next = retrying.failFirst(null, FailFirstRequestProto.newBuilder().setFailures(0).build());
      assertEquals(0, next.getRetryCount());
      assertEquals(first.getClientId(), next.getClientId());
      assertTrue(next.getCallId() != first.getCallId());
    }
  }

  @Test
  void serverRestartedDuringARetryingCall() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      // The stock client's own connect retries would hide the engine's: make each attempt fail fast.
      conf.setInt("ipc.client.connect.max.retries", 0);
      conf.setInt("ipc.client.connect.timeout", 2_000);
      RPC.Server server = fixture.startServer(conf);
      InetSocketAddress address = server.getListenerAddress();
      EchoTestPB raw = fixture.proxy(EchoTestPB.class, conf, address, UserGroupInformation.getCurrentUser());
      assertEquals("sluice", raw.callContext(null, EmptyProto.getDefaultInstance()).getPath());
      RetryPolicy fixedSleep = RetryPolicies.retryUpToMaximumCountWithFixedSleep(200, 100, TimeUnit.MILLISECONDS);
      CountDownLatch failedOnce = new CountDownLatch(1);
      RetryPolicy policy = (e, retries, failovers, idempotent) -> {
        failedOnce.countDown();
        return fixedSleep.shouldRetry(e, retries, failovers, idempotent);
      };
      EchoTestPB retrying = (EchoTestPB) RetryProxy.create(EchoTestPB.class, raw, policy);

      server.stop();
      CompletableFuture<CallContextProto> call = CompletableFuture.supplyAsync(() -> {
        try {
          return retrying.callContext(null, EmptyProto.getDefaultInstance());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      assertTrue(failedOnce.await(60, TimeUnit.SECONDS), "the call never failed against the stopped server");
      RPC.Server restarted = fixture.startServer(conf, address.getPort());
      CallContextProto answer = call.get(60, TimeUnit.SECONDS);
      assertEquals("sluice", answer.getPath(), "after the restart the call takes the new server's transport");
      assertTrue(answer.getRetryCount() >= 1, "the call that succeeded was a retry");
      assertTrue(((SluiceRpcServer) restarted).transportStats().orElseThrow().calls() >= 1);
    }
  }
}
