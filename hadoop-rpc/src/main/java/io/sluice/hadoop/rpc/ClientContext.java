package io.sluice.hadoop.rpc;

import io.sluice.transport.Connection;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import io.sluice.transport.memory.RegisteredAllocator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.ClientId;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client half of the engine for one set of transport settings, as Hadoop's {@code Client} is
 * for the stock engine: one transport endpoint, one client id, and the {@link ServerConnection}s
 * keyed by (server address, protocol, user), each found through {@link TransportDiscovery} on
 * first use and closed after {@code ipc.client.connection.maxidletime} without calls.
 *
 * <p>Proxies share it through {@link ClientContexts}, which closes it with its last proxy. Thread
 * safe.
 */
final class ClientContext implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientContext.class);

  /** What a stock client keys its connections by, less the settings every proxy here shares. */
  record Key(InetSocketAddress address, String protocolName, UserGroupInformation user) {}

  private final EngineSettings settings;
  private final Transport transport;
  private final byte[] clientId = ClientId.getClientId();
  private final Map<Key, ServerConnection> connections = new ConcurrentHashMap<>();
  private final Map<Key, Object> openLocks = new ConcurrentHashMap<>();
  private final ScheduledExecutorService reaper;
  private final RegisteredAllocator memory;
  private final RegisteredAllocator landing;
  /** This client's transport address as a literal, as servers require it in call frames. */
  private final String callerHost;

  ClientContext(EngineSettings settings) throws TransportException {
    this.settings = settings;
    this.transport = Transports.open(settings.transportConfig(), MessageHandler.REJECT_ALL);
    this.callerHost = addressLiteral(transport);
    this.memory = RegisteredAllocator.root("RPC client", transport);
    this.landing = RpcRegions.pool(memory, "response landing", RpcRegions.DESTINATION_IDLE_BYTES);
    this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-rpc-idle-connections");
      t.setDaemon(true);
      return t;
    });
    // Also sends the releases of response bodies that no call carried (see ServerConnection).
    reaper.scheduleWithFixedDelay(this::closeIdle, 100, 100, TimeUnit.MILLISECONDS);
  }

  EngineSettings settings() {
    return settings;
  }

  Transport transport() {
    return transport;
  }

  /**
   * This client's transport host as an IP address literal: servers never look up a name a
   * caller claims, so the client resolves its own advertised name, once, here.
   */
  String callerHost() {
    return callerHost;
  }

  private static String addressLiteral(Transport transport) throws TransportException {
    String host = transport.localAddress().host();
    try {
      return java.net.InetAddress.getByName(host).getHostAddress();
    } catch (java.net.UnknownHostException e) {
      transport.close();
      throw new TransportException("cannot resolve this client's transport host " + host + " to an address", e);
    }
  }

  /** The registered memory of this client, whose pools its connections take. */
  RegisteredAllocator memory() {
    return memory;
  }

  /** Where response bodies are READ to. */
  RegisteredAllocator landing() {
    return landing;
  }

  byte[] clientId() {
    return clientId;
  }

  /** Connections currently kept: for tests. */
  int connectionCount() {
    return connections.size();
  }

  /**
   * An acquired connection for the key (release it with {@link ServerConnection#done()}),
   * opening one when there is none: discovery over the stock path, then the transport.
   *
   * @throws IOException if the server cannot be reached
   */
  ServerConnection acquire(Key key, Configuration conf, SocketFactory factory, int rpcTimeout, int maxIdleMs)
      throws IOException {
    while (true) {
      ServerConnection existing = connections.get(key);
      if (existing != null) {
        if (existing.acquire()) {
          return existing;
        }
        connections.remove(key, existing);
        existing.close();
        continue;
      }
      synchronized (openLocks.computeIfAbsent(key, k -> new Object())) {
        if (connections.containsKey(key)) {
          continue;
        }
        ServerConnection opened = open(key, conf, factory, rpcTimeout, maxIdleMs);
        connections.put(key, opened);
      }
    }
  }

  private ServerConnection open(Key key, Configuration conf, SocketFactory factory, int rpcTimeout, int maxIdleMs)
      throws IOException {
    Optional<TransportDiscovery.Answer> answer =
        TransportDiscovery.lookup(key.address(), key.user(), conf, factory, rpcTimeout);
    if (answer.isEmpty()) {
      TransportPolicy.logStockPath("client of " + key.address(), "the server offers no Sluice transport");
      return new ServerConnection(this, key, null, maxIdleMs);
    }
    NodeAddress peer = new NodeAddress(answer.get().host(), answer.get().port());
    String what = "connecting to the transport of " + key.address() + " at " + peer;
    Connection c;
    try {
      c = transport.connect(peer).get(connectDeadlineMs(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(what + ": interrupted");
    } catch (ExecutionException | TimeoutException e) {
      throw CallFailures.connectFailure(e instanceof ExecutionException ? e.getCause() : e, what);
    }
    if (c.peerNode() != answer.get().node()) {
      c.close();
      throw new IOException(what + ": the transport there is node " + Long.toHexString(c.peerNode())
          + ", but the RPC server named node " + Long.toHexString(answer.get().node()));
    }
    LOG.debug("{} over {} ({})", key, peer, c.dataPath());
    return new ServerConnection(this, key, c, maxIdleMs);
  }

  private long connectDeadlineMs() {
    return settings.transportConfig().value(io.sluice.transport.config.TransportKeys.CONNECT_TIMEOUT_MS) + 1_000;
  }

  private void closeIdle() {
    long now = System.nanoTime();
    for (Map.Entry<Key, ServerConnection> e : connections.entrySet()) {
      if (e.getValue().retireIfIdle(now)) {
        connections.remove(e.getKey(), e.getValue());
      } else {
        e.getValue().flushReleases();
      }
    }
  }

  @Override
  public void close() {
    reaper.shutdownNow();
    for (ServerConnection c : connections.values()) {
      c.close();
    }
    connections.clear();
    memory.shutdown(); // a call still under way frees its region when it ends
    transport.close();
  }
}
