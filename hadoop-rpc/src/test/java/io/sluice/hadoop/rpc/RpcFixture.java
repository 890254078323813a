package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoTestService;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.PolicyProvider;
import org.apache.hadoop.security.authorize.Service;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.function.Executable;

/**
 * Real RPC servers and proxies on loopback for one test; closing it stops every proxy it made,
 * then every server. Not thread safe (one test thread builds it), but its proxies are.
 */
final class RpcFixture implements AutoCloseable {
  static final String SECRET = "sluice-hadoop-rpc-test-secret";
  private static final String ACL_KEY = "security.sluice.echo.test.protocol.acl";

  private final List<Object> proxies = new ArrayList<>();
  private final List<RPC.Server> servers = new ArrayList<>();

  /**
   * A configuration with the engine switched on for the test protocols, or not. Servers and
   * clients built through {@link RPC} use the Sluice engine either way once any test of the JVM
   * switched it on (Hadoop caches engines per protocol); use {@link #stockProxy} for stock clients.
   */
  static Configuration conf(boolean sluice) {
    Configuration conf = new Configuration();
    conf.set("sluice.transport.secret", SECRET);
    conf.set("sluice.transport.provider", "tcp");
    conf.set("sluice.transport.bindHost", "127.0.0.1");
    conf.set("sluice.transport.advertiseHost", "127.0.0.1");
    Class<?> engine = sluice ? SluiceRpcEngine.class : ProtobufRpcEngine2.class;
    RPC.setProtocolEngine(conf, EchoTestPB.class, engine);
    RPC.setProtocolEngine(conf, UnregisteredPB.class, engine);
    return conf;
  }

  /** Starts a server of the test protocol on 127.0.0.1 (port 0: any). */
  RPC.Server startServer(Configuration conf, int port) throws IOException {
    RPC.Server server = new RPC.Builder(conf)
        .setProtocol(EchoTestPB.class)
        .setInstance(EchoTestService.newReflectiveBlockingService(new EchoTestImpl()))
        .setBindAddress("127.0.0.1")
        .setPort(port)
        .setNumHandlers(4)
        .build();
    servers.add(server);
    server.start();
    return server;
  }

  RPC.Server startServer(Configuration conf) throws IOException {
    return startServer(conf, 0);
  }

  /** A server whose access list admits one user alone, and the configuration its proxies use. */
  record AclServer(RPC.Server server, Configuration conf) {}

  /**
   * Starts a server of the test protocol on a new {@link #conf(boolean) conf(true)} with
   * service-level authorization on and an access list that admits {@code user} alone.
   */
  AclServer startServerServingOnly(String user) throws IOException {
    Configuration conf = conf(true);
    conf.setBoolean("hadoop.security.authorization", true);
    conf.set(ACL_KEY, user);
    RPC.Server server = startServer(conf);
    server.refreshServiceAcl(conf, new PolicyProvider() {
      @Override
      public Service[] getServices() {
        return new Service[] {new Service(ACL_KEY, EchoTestPB.class)};
      }
    });
    return new AclServer(server, conf);
  }

  /**
   * Asserts that {@code call} failed because the server's access list refused its caller;
   * returns the server's exception.
   */
  static RemoteException assertUnauthorized(Executable call) {
    ServiceException e = assertThrows(ServiceException.class, call);
    RemoteException remote = assertInstanceOf(RemoteException.class, e.getCause());
    assertEquals(AuthorizationException.class.getName(), remote.getClassName());
    return remote;
  }

  <T> T proxy(Class<T> protocol, Configuration conf, RPC.Server server) throws IOException {
    return proxy(protocol, conf, server.getListenerAddress(), UserGroupInformation.getCurrentUser());
  }

  /** A proxy of the test protocol to {@code server} that calls as the remote user {@code user}. */
  EchoTestPB proxyAs(String user, Configuration conf, RPC.Server server) throws IOException {
    return proxy(EchoTestPB.class, conf, server.getListenerAddress(), UserGroupInformation.createRemoteUser(user));
  }

  /** A proxy of the test protocol to {@code server} that calls as the remote user {@code user}. */
  EchoTestPB proxyAs(String user, AclServer server) throws IOException {
    return proxyAs(user, server.conf(), server.server());
  }

  <T> T proxy(Class<T> protocol, Configuration conf, InetSocketAddress address, UserGroupInformation user)
      throws IOException {
    T proxy = RPC.getProtocolProxy(protocol, RPC.getProtocolVersion(protocol), address, user, conf,
        org.apache.hadoop.net.NetUtils.getDefaultSocketFactory(conf), org.apache.hadoop.ipc.Client.getRpcTimeout(conf), null).getProxy();
    track(proxy);
    return proxy;
  }

  /**
   * A proxy of the stock protobuf engine. Hadoop caches one engine per protocol class for the
   * whole JVM (RPC.getProtocolEngine), and these tests switch the test protocols to the Sluice
   * engine, so a stock client is made from the stock engine directly.
   */
  <T> T stockProxy(Class<T> protocol, Configuration conf, InetSocketAddress address) throws IOException {
    T proxy = new ProtobufRpcEngine2().getProxy(protocol, RPC.getProtocolVersion(protocol), address,
        UserGroupInformation.getCurrentUser(), conf, org.apache.hadoop.net.NetUtils.getDefaultSocketFactory(conf),
        org.apache.hadoop.ipc.Client.getRpcTimeout(conf), null).getProxy();
    track(proxy);
    return proxy;
  }

  /** Stops this proxy when the fixture closes. */
  void track(Object proxy) {
    proxies.add(proxy);
  }

  @Override
  public void close() {
    for (Object p : proxies) {
      RPC.stopProxy(p);
    }
    for (RPC.Server s : servers) {
      s.stop();
    }
  }
}
