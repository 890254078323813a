package io.sluice.hadoop.rpc;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.Client;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RpcInvocationHandler;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.Message;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;

/**
 * The invocation handler behind a proxy of {@link SluiceRpcEngine}. Like the stock protobuf
 * engine's, each method takes (RpcController, request message) and returns the response message
 * or throws {@link ServiceException} whose cause is the failure: a {@code RemoteException} for an
 * exception on the server, an IOException otherwise. Call id and retry count come from {@link
 * Client}'s per-thread values that {@code RetryInvocationHandler} sets (it recognises this handler
 * as an {@link RpcInvocationHandler}), so retried calls keep their call id as the retry cache
 * expects. When the server offers no transport the call goes through a stock proxy instead.
 *
 * <p>Thread safe; holds one reference to a {@link ClientContext} until {@link #close()}.
 */
final class TransportInvoker implements RpcInvocationHandler {
  private final Class<?> protocol;
  private final long clientVersion;
  private final Client.ConnectionId connectionId;
  private final ClientContext.Key key;
  private final Configuration conf;
  private final SocketFactory factory;
  private final int rpcTimeout;
  private final int maxIdleMs;
  private final ClientContext context;
  private final Map<Method, Message> responsePrototypes = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private Object stockProxy; // guarded by this

  TransportInvoker(Class<?> protocol, InetSocketAddress address, UserGroupInformation user, Configuration conf,
      SocketFactory factory, int rpcTimeout, Client.ConnectionId connectionId, int maxIdleMs,
      ClientContext context) {
    this.protocol = protocol;
    this.clientVersion = RPC.getProtocolVersion(protocol);
    this.connectionId = connectionId;
    this.key = new ClientContext.Key(address, RPC.getProtocolName(protocol), user);
    this.conf = conf;
    this.factory = factory;
    this.rpcTimeout = rpcTimeout;
    this.maxIdleMs = maxIdleMs;
    this.context = context;
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    if (method.getDeclaringClass() == Object.class) {
      return switch (method.getName()) {
        case "equals" -> proxy == args[0];
        case "hashCode" -> System.identityHashCode(proxy);
        default -> "SluiceRpcProxy[" + key.protocolName() + " at " + key.address() + " as " + key.user() + "]";
      };
    }
    if (args == null || args.length != 2) {
      throw new ServiceException("Too many or few parameters for request. Method: [" + method.getName()
          + "], Expected: 2, Actual: " + (args == null ? 0 : args.length));
    }
    if (args[1] == null) {
      throw new ServiceException("null param while calling Method: [" + method.getName() + "]");
    }
    if (!(args[1] instanceof Message request)) {
      throw new ServiceException(new IllegalArgumentException("SluiceRpcEngine serves protocols whose messages use"
          + " Hadoop's shaded protobuf (those of ProtobufRpcEngine2); " + method.getName() + " was called with a "
          + args[1].getClass().getName()));
    }
    if (closed.get()) {
      throw new ServiceException(new IOException("the proxy for " + key.protocolName() + " was stopped"));
    }
    // The ids RetryInvocationHandler chose for this call, taken now (a stock call made while
    // connecting, discovery, must not consume them).
    int callId = Client.getCallId();
    int retryCount = Client.getRetryCount();
    Object externalHandler = Client.getExternalHandler();
    Client.setCallIdAndRetryCountUnprotected(null, 0, null);
    ServerConnection connection;
    try {
      connection = context.acquire(key, conf, factory, rpcTimeout, maxIdleMs);
    } catch (IOException e) {
      throw new ServiceException(e);
    }
    try {
      if (connection.isStockPath() || Client.isAsynchronousMode()) {
        // Asynchronous calls hand their result over through the stock client; they take its path.
        Client.setCallIdAndRetryCountUnprotected(callId, retryCount, externalHandler);
        return invokeStock(method, args);
      }
      long timeoutMs = rpcTimeout > 0 ? rpcTimeout : context.settings().ioTimeoutMs() + 1_000;
      return connection.call(callId, retryCount, method.getName(), clientVersion, request,
          responsePrototype(method), timeoutMs);
    } catch (IOException e) {
      throw new ServiceException(e);
    } finally {
      connection.done();
    }
  }

  private Object invokeStock(Method method, Object[] args) throws Throwable {
    Object stock;
    synchronized (this) {
      if (stockProxy == null) {
        stockProxy = new ProtobufRpcEngine2()
            .getProxy(protocol, clientVersion, connectionId, conf, factory, null).getProxy();
      }
      stock = stockProxy;
    }
    try {
      return method.invoke(stock, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private Message responsePrototype(Method method) throws IOException {
    Message prototype = responsePrototypes.get(method);
    if (prototype == null) {
      try {
        prototype = (Message) method.getReturnType().getMethod("getDefaultInstance").invoke(null);
      } catch (ReflectiveOperationException | ClassCastException e) {
        throw new IOException(method + " does not return a protobuf message", e);
      }
      responsePrototypes.put(method, prototype);
    }
    return prototype;
  }

  @Override
  public Client.ConnectionId getConnectionId() {
    return connectionId;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      Object stock;
      synchronized (this) {
        stock = stockProxy;
        stockProxy = null;
      }
      if (stock != null) {
        RPC.stopProxy(stock);
      }
      ClientContexts.release(context);
    }
  }
}
