package io.sluice.hadoop.rpc;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.io.retry.RetryPolicy;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.ProtocolMetaInfoPB;
import org.apache.hadoop.ipc.ProtocolProxy;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RpcEngine;
import org.apache.hadoop.ipc.SluiceCalls;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;

/**
 * A Hadoop {@link RpcEngine} for protobuf protocols (those the stock {@link ProtobufRpcEngine2}
 * serves) that carries calls over the Sluice transport. Turn it on per protocol:
 *
 * <pre>
 * &lt;property&gt;
 *   &lt;name&gt;rpc.engine.com.example.MyProtocolPB&lt;/name&gt;
 *   &lt;value&gt;io.sluice.hadoop.rpc.SluiceRpcEngine&lt;/value&gt;
 * &lt;/property&gt;
 * </pre>
 *
 * or {@code RPC.setProtocolEngine(conf, MyProtocolPB.class, SluiceRpcEngine.class)}, on servers and
 * clients, with {@code sluice.transport.secret} set alike on both. Servers are {@link
 * SluiceRpcServer}s and still serve stock clients; clients find a server's transport by asking it,
 * and use the stock path where it has none. With Hadoop security on, a SASL QOP, or no secret,
 * everything takes the stock path ({@link TransportPolicy}).
 *
 * <p>Stateless: Hadoop keeps one instance per protocol and calls it from any thread.
 */
public final class SluiceRpcEngine implements RpcEngine {
  private final ProtobufRpcEngine2 stock = new ProtobufRpcEngine2();

  @Override
  public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, InetSocketAddress addr,
      UserGroupInformation ticket, Configuration conf, SocketFactory factory, int rpcTimeout,
      RetryPolicy connectionRetryPolicy) throws IOException {
    return getProxy(protocol, clientVersion, addr, ticket, conf, factory, rpcTimeout, connectionRetryPolicy,
        null, null);
  }

  @Override
  public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, Client.ConnectionId connId,
      Configuration conf, SocketFactory factory, AlignmentContext alignmentContext) throws IOException {
    Optional<String> stockReason = stockReason(conf, alignmentContext);
    if (stockReason.isPresent()) {
      TransportPolicy.logStockPath("client", stockReason.get());
      return stock.getProxy(protocol, clientVersion, connId, conf, factory, alignmentContext);
    }
    return transportProxy(protocol, SluiceCalls.address(connId), SluiceCalls.ticket(connId), conf, factory,
        SluiceCalls.rpcTimeout(connId), connId);
  }

  @Override
  public <T> ProtocolProxy<T> getProxy(Class<T> protocol, long clientVersion, InetSocketAddress addr,
      UserGroupInformation ticket, Configuration conf, SocketFactory factory, int rpcTimeout,
      RetryPolicy connectionRetryPolicy, AtomicBoolean fallbackToSimpleAuth, AlignmentContext alignmentContext)
      throws IOException {
    Optional<String> stockReason = stockReason(conf, alignmentContext);
    if (stockReason.isPresent()) {
      TransportPolicy.logStockPath("client", stockReason.get());
      return stock.getProxy(protocol, clientVersion, addr, ticket, conf, factory, rpcTimeout,
          connectionRetryPolicy, fallbackToSimpleAuth, alignmentContext);
    }
    UserGroupInformation user = ticket != null ? ticket : UserGroupInformation.getCurrentUser();
    Client.ConnectionId connId =
        SluiceCalls.connectionId(addr, protocol, user, rpcTimeout, connectionRetryPolicy, conf);
    return transportProxy(protocol, addr, user, conf, factory, rpcTimeout, connId);
  }

  @Override
  public RPC.Server getServer(Class<?> protocol, Object protocolImpl, String bindAddress, int port,
      int numHandlers, int numReaders, int queueSizePerHandler, boolean verbose, Configuration conf,
      SecretManager<? extends TokenIdentifier> secretManager, String portRangeConfig,
      AlignmentContext alignmentContext) throws IOException {
    return new SluiceRpcServer(protocol, protocolImpl, conf, bindAddress, port, numHandlers, numReaders,
        queueSizePerHandler, verbose, secretManager, portRangeConfig, alignmentContext);
  }

  @Override
  public ProtocolProxy<ProtocolMetaInfoPB> getProtocolMetaInfoProxy(Client.ConnectionId connId,
      Configuration conf, SocketFactory factory) throws IOException {
    return stock.getProtocolMetaInfoProxy(connId, conf, factory);
  }

  private static Optional<String> stockReason(Configuration conf, AlignmentContext alignmentContext) {
    if (alignmentContext != null) {
      return Optional.of("the proxy has an AlignmentContext (state ids are not carried by the transport)");
    }
    return TransportPolicy.stockPathReason(conf);
  }

  private static <T> ProtocolProxy<T> transportProxy(Class<T> protocol, InetSocketAddress addr,
      UserGroupInformation user, Configuration conf, SocketFactory factory, int rpcTimeout,
      Client.ConnectionId connId) throws IOException {
    if (user == null) {
      user = UserGroupInformation.getCurrentUser();
    }
    int maxIdle = conf.getInt(CommonConfigurationKeysPublic.IPC_CLIENT_CONNECTION_MAXIDLETIME_KEY,
        CommonConfigurationKeysPublic.IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT);
    ClientContext context = ClientContexts.acquire(EngineSettings.from(conf).listeningToward(addr));
    TransportInvoker invoker =
        new TransportInvoker(protocol, addr, user, conf, factory, rpcTimeout, connId, maxIdle, context);
    @SuppressWarnings("unchecked")
    T proxy = (T) Proxy.newProxyInstance(protocol.getClassLoader(), new Class<?>[] {protocol}, invoker);
    return new ProtocolProxy<>(protocol, proxy, false);
  }
}
