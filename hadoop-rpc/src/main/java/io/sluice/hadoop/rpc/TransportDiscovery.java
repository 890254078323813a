package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportAddressRequestProto;
import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportAddressResponseProto;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Optional;
import javax.net.SocketFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks a server's TCP listener, with the stock protobuf engine and as the caller's user, where
 * its transport listens. A server that does not know the question (a stock server), refuses it,
 * or runs without a transport answers "nowhere", and the caller uses the stock path. Stateless.
 */
final class TransportDiscovery {
  private static final Logger LOG = LoggerFactory.getLogger(TransportDiscovery.class);

  /** Where a server's transport listens and which node it is. */
  record Answer(String host, int port, long node) {}

  private TransportDiscovery() {}

  /**
   * @throws IOException when the server cannot be reached (as a stock call would fail)
   */
  static Optional<Answer> lookup(InetSocketAddress server, UserGroupInformation user, Configuration conf,
      SocketFactory factory, int rpcTimeout) throws IOException {
    TransportDiscoveryPB proxy = new ProtobufRpcEngine2().getProxy(TransportDiscoveryPB.class,
        RPC.getProtocolVersion(TransportDiscoveryPB.class), server, user, conf, factory, rpcTimeout, null)
        .getProxy();
    TransportAddressResponseProto answer;
    try {
      answer = proxy.getTransportAddress(null, TransportAddressRequestProto.getDefaultInstance());
    } catch (ServiceException e) {
      Throwable cause = e.getCause();
      IOException io = cause instanceof IOException ? (IOException) cause : new IOException(e.getMessage(), e);
      if (io instanceof RemoteException remote) {
        LOG.debug("{} does not offer the Sluice transport: {}", server, remote.getClassName());
        return Optional.empty();
      }
      throw io;
    } finally {
      RPC.stopProxy(proxy);
    }
    if (!answer.hasHost() || !answer.hasPort() || answer.getHost().isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new Answer(answer.getHost(), answer.getPort(), answer.getNode()));
  }
}
