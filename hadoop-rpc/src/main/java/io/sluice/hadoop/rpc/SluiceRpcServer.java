package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportAddressRequestProto;
import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportAddressResponseProto;
import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportDiscoveryService;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.config.TransportKeys;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.AlignmentContext;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.security.authorize.PolicyProvider;
import org.apache.hadoop.security.authorize.Service;
import org.apache.hadoop.security.token.SecretManager;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.apache.hadoop.thirdparty.protobuf.RpcController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RPC server {@link SluiceRpcEngine} builds: Hadoop's protobuf server, whose TCP listener
 * serves stock clients as always, plus a Sluice transport whose calls go to the same call queue
 * and handler threads (see {@link TransportCallService}). It also serves {@link
 * TransportDiscoveryPB} on its TCP listener so clients can find the transport.
 *
 * <p>The transport starts with {@link #start()} and stops with {@link #stop()}. It does not start
 * when {@link TransportPolicy} says the stock path must be used, or when no provider can open; the
 * server then serves TCP only and says why in its log. Thread safe as Hadoop's server is.
 */
public final class SluiceRpcServer extends ProtobufRpcEngine2.Server {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceRpcServer.class);

  private final Configuration conf;
  private volatile TransportCallService transport;
  private volatile SluiceRpcMetrics metrics;

  public SluiceRpcServer(Class<?> protocolClass, Object protocolImpl, Configuration conf,
      String bindAddress, int port, int numHandlers, int numReaders, int queueSizePerHandler,
      boolean verbose, SecretManager<? extends TokenIdentifier> secretManager,
      String portRangeConfig, AlignmentContext alignmentContext) throws IOException {
    super(protocolClass, protocolImpl, conf, bindAddress, port, numHandlers, numReaders,
        queueSizePerHandler, verbose, secretManager, portRangeConfig, alignmentContext);
    this.conf = conf;
    addProtocol(RPC.RpcKind.RPC_PROTOCOL_BUFFER, TransportDiscoveryPB.class,
        TransportDiscoveryService.newReflectiveBlockingService(new Discovery()));
  }

  @Override
  public synchronized void start() {
    super.start();
    Optional<String> stockReason = TransportPolicy.stockPathReason(conf);
    if (stockReason.isPresent()) {
      TransportPolicy.logStockPath("server", stockReason.get());
      return;
    }
    EngineSettings settings = EngineSettings.from(conf);
    for (String w : EngineSettings.unknownKeys(conf)) {
      LOG.warn("Sluice RPC server {}: {}", describe(), w);
    }
    InetAddress bound = getListenerAddress().getAddress();
    if (bound != null && !bound.isAnyLocalAddress()) {
      // Unless told otherwise, the transport listens where the RPC listener does.
      settings = settings.withTransportDefaults(Map.of(TransportKeys.BIND_HOST.key(), bound.getHostAddress()));
    }
    try {
      transport = TransportCallService.open(this, settings, conf);
      try {
        metrics = SluiceRpcMetrics.register(transport, getListenerAddress().getPort());
      } catch (RuntimeException e) {
        LOG.warn("Sluice RPC server {}: its metrics source is not registered: {}", describe(), e.toString());
      }
      LOG.info("Sluice RPC server {}: transport {} at {} beside TCP {}", describe(),
          transport.provider(), transport.address(), getListenerAddress());
    } catch (RuntimeException | IOException e) {
      LOG.warn("Sluice RPC server {}: the transport could not start, serving the stock TCP path only",
          describe(), e);
    }
  }

  @Override
  public synchronized void stop() {
    TransportCallService t = transport;
    transport = null;
    SluiceRpcMetrics m = metrics;
    metrics = null;
    if (m != null) {
      m.unregister();
    }
    if (t != null) {
      t.close();
    }
    super.stop();
  }

  /** Where the transport listens, while it runs. */
  public Optional<NodeAddress> transportAddress() {
    TransportCallService t = transport;
    return t == null ? Optional.empty() : Optional.of(t.address());
  }

  /** The name of the transport's metrics2 source, while it runs. */
  Optional<String> metricsSourceName() {
    SluiceRpcMetrics m = metrics;
    return m == null ? Optional.empty() : Optional.of(m.name());
  }

  /** The transport's counters, while it runs. */
  Optional<TransportCallService.Stats> transportStats() {
    TransportCallService t = transport;
    return t == null ? Optional.empty() : Optional.of(t.stats());
  }

  @Override
  public void refreshServiceAcl(Configuration conf, PolicyProvider provider) {
    super.refreshServiceAcl(conf, withDiscovery(provider));
    forgetAuthorizedCallers();
  }

  @Override
  public void refreshServiceAclWithLoadedConfiguration(Configuration conf, PolicyProvider provider) {
    super.refreshServiceAclWithLoadedConfiguration(conf, withDiscovery(provider));
    forgetAuthorizedCallers();
  }

  private void forgetAuthorizedCallers() {
    TransportCallService t = transport;
    if (t != null) {
      t.forgetAuthorizedCallers();
    }
  }

  /** The operator's policy plus an ACL for the discovery protocol (default: everyone). */
  private static PolicyProvider withDiscovery(PolicyProvider provider) {
    return new PolicyProvider() {
      @Override
      public Service[] getServices() {
        Service[] base = provider.getServices();
        Service[] all = base == null ? new Service[1] : Arrays.copyOf(base, base.length + 1);
        all[all.length - 1] = new Service(SluiceRpcOption.DISCOVERY_ACL.key(), TransportDiscoveryPB.class);
        return all;
      }
    };
  }

  private String describe() {
    return getListenerAddress().toString();
  }

  /** Answers where the transport listens; empty fields when it does not run. */
  private final class Discovery implements TransportDiscoveryPB {
    @Override
    public TransportAddressResponseProto getTransportAddress(RpcController controller,
        TransportAddressRequestProto request) {
      TransportCallService t = transport;
      if (t == null) {
        return TransportAddressResponseProto.getDefaultInstance();
      }
      return TransportAddressResponseProto.newBuilder()
          .setHost(t.address().host()).setPort(t.address().port()).setNode(t.nodeId()).build();
    }
  }
}
