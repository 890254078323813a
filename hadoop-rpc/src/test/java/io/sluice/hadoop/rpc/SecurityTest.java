package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.CallContextProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.Test;

/** Service-level authorization, proxy users, and the rules that send calls to the stock path. */
class SecurityTest {
  @Test
  void serviceLevelAuthorizationDeniesTransportCallsOfOtherUsers() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      RpcFixture.AclServer server = fixture.startServerServingOnly("alice");
      EchoTestPB asAlice = fixture.proxyAs("alice", server);
      EchoTestPB asBob = fixture.proxyAs("bob", server);
      CallContextProto allowed = asAlice.callContext(null, EmptyProto.getDefaultInstance());
      assertEquals("sluice", allowed.getPath());
      assertEquals("alice", allowed.getRemoteUser());
      RemoteException remote = RpcFixture.assertUnauthorized(
          () -> asBob.callContext(null, EmptyProto.getDefaultInstance()));
      assertTrue(remote.getMessage().contains("bob"), remote.getMessage());
      // The same user is refused on the stock path too.
      EchoTestPB stockBob = UserGroupInformation.createRemoteUser("bob").doAs(
          (java.security.PrivilegedExceptionAction<EchoTestPB>) () ->
              fixture.stockProxy(EchoTestPB.class, server.conf(), server.server().getListenerAddress()));
      assertThrows(ServiceException.class, () -> stockBob.callContext(null, EmptyProto.getDefaultInstance()));
    }
  }

  @Test
  void proxyUsersReachTheServerAsWithTheStockEngineAndAreChecked() throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      Configuration conf = RpcFixture.conf(true);
      conf.set("hadoop.proxyuser.dave.users", "carol");
      conf.set("hadoop.proxyuser.dave.hosts", "*");
      ProxyUsers.refreshSuperUserGroupsConfiguration(conf);
      try {
        RPC.Server server = fixture.startServer(conf);
        UserGroupInformation dave = UserGroupInformation.createRemoteUser("dave");
        EchoTestPB asCarol = fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(),
            UserGroupInformation.createProxyUser("carol", dave));
        CallContextProto context = asCarol.callContext(null, EmptyProto.getDefaultInstance());
        assertEquals("sluice", context.getPath());
        assertEquals("carol", context.getRemoteUser());
        assertEquals("dave", context.getRealUser());

        EchoTestPB asErin = fixture.proxy(EchoTestPB.class, conf, server.getListenerAddress(),
            UserGroupInformation.createProxyUser("erin", dave));
        RpcFixture.assertUnauthorized(() -> asErin.callContext(null, EmptyProto.getDefaultInstance()));
      } finally {
        ProxyUsers.refreshSuperUserGroupsConfiguration(new Configuration());
      }
    }
  }

  @Test
  void withoutASecretEverythingTakesTheStockPath() throws Exception {
    Configuration conf = RpcFixture.conf(true);
    conf.unset("sluice.transport.secret");
    assertStockPath(conf, conf);
  }

  @Test
  void aSluiceClientOfAServerWithoutTransportTakesTheStockPath() throws Exception {
    Configuration serverConf = RpcFixture.conf(true);
    serverConf.set("hadoop.rpc.protection", "privacy");
    // The client itself would use the transport; the server offers none.
    assertStockPath(serverConf, RpcFixture.conf(true));
  }

  /** A server on {@code serverConf} offers no transport, and a client on {@code clientConf} calls it the stock way. */
  private static void assertStockPath(Configuration serverConf, Configuration clientConf) throws Exception {
    try (RpcFixture fixture = new RpcFixture()) {
      RPC.Server server = fixture.startServer(serverConf);
      assertFalse(((SluiceRpcServer) server).transportAddress().isPresent());
      EchoTestPB proxy = fixture.proxy(EchoTestPB.class, clientConf, server);
      assertEquals("rpc", proxy.callContext(null, EmptyProto.getDefaultInstance()).getPath());
    }
  }

  @Test
  void securityAndQualityOfProtectionSettingsSelectTheStockPath() {
    Configuration conf = RpcFixture.conf(true);
    assertTrue(TransportPolicy.stockPathReason(conf).isEmpty());

    Configuration kerberos = new Configuration(conf);
    kerberos.set("hadoop.security.authentication", "kerberos");
    assertTrue(TransportPolicy.stockPathReason(kerberos).orElseThrow().contains("KERBEROS"));

    Configuration integrity = new Configuration(conf);
    integrity.set("hadoop.rpc.protection", "authentication,integrity");
    assertTrue(TransportPolicy.stockPathReason(integrity).orElseThrow().contains("integrity"));

    Configuration resolver = new Configuration(conf);
    resolver.set("hadoop.security.saslproperties.resolver.class", "org.example.Resolver");
    assertTrue(TransportPolicy.stockPathReason(resolver).isPresent());

    Configuration noSecret = new Configuration(conf);
    noSecret.set("sluice.transport.secret", "");
    assertTrue(TransportPolicy.stockPathReason(noSecret).orElseThrow().contains("secret"));
  }
}
