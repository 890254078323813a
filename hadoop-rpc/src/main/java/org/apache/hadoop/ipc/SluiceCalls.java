package org.apache.hadoop.ipc;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.protobuf.ProtobufRpcEngine2Protos.RequestHeaderProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AuthorizationException;

/**
 * The few package-private parts of Hadoop's ipc layer that the Sluice engine needs, behind
 * static methods: building, authorizing and queueing {@link SluiceCall}s on an {@link
 * RPC.Server}, decoding a request body as the protobuf engine's own request type, encoding a
 * handler's return value, and reading a {@link Client.ConnectionId}. Stateless and thread safe.
 */
public final class SluiceCalls {
  private SluiceCalls() {}

  /**
   * Decodes a request body (a length-delimited {@link RequestHeaderProto} then the
   * length-delimited request message, as the stock protobuf engine sends it) into the request
   * type the protobuf invoker expects, checking the header now so bad input fails here.
   *
   * @throws IOException if the bytes are not such a body
   */
  public static Writable decodeRequest(byte[] body) throws IOException {
    ProtobufRpcEngine2.RpcProtobufRequest request = RpcWritable.Buffer.wrap(ByteBuffer.wrap(body))
        .newInstance(ProtobufRpcEngine2.RpcProtobufRequest.class, null);
    RequestHeaderProto header = request.getRequestHeader();
    if (header == null || !header.hasMethodName() || !header.hasDeclaringClassProtocolName()) {
      throw new IOException("request header lacks a method or protocol name");
    }
    return request;
  }

  /** A call ready to be queued; its outcome completes once a handler has run it. */
  public static SluiceCall newCall(RPC.Server server, int callId, int retryCount, byte[] clientId,
      String protocolName, Writable request, UserGroupInformation user, InetAddress remoteAddress) {
    return new SluiceCall(server, callId, retryCount, clientId, protocolName, request, user, remoteAddress);
  }

  /**
   * Puts the call on the server's call queue with the priority its scheduler assigns (FairCallQueue
   * included), as the TCP listener does. Blocks while the queue is full unless the server backs
   * off, in which case the back-off exception is thrown for the client.
   */
  public static void queue(Server server, SluiceCall call) throws IOException, InterruptedException {
    call.setPriorityLevel(server.getPriorityLevel(call));
    server.queueCall(call);
  }

  /**
   * Service-level authorization of {@code user} for the protocol, with the server's own policy
   * (what the TCP listener checks when a connection sends its context), counted in the server's
   * authorization metrics.
   */
  public static void authorize(Server server, UserGroupInformation user, String protocolName,
      InetAddress address) throws AuthorizationException {
    try {
      Configuration conf = server.getConf();
      if (conf.getBoolean(CommonConfigurationKeys.HADOOP_SECURITY_AUTHORIZATION, false)) {
        Class<?> protocol;
        try {
          protocol = Server.getProtocolClass(protocolName, conf);
        } catch (ClassNotFoundException e) {
          throw new AuthorizationException("Unknown protocol: " + protocolName);
        }
        server.getServiceAuthorizationManager().authorize(user, protocol, conf, address);
      }
      server.getRpcMetrics().incrAuthorizationSuccesses();
    } catch (AuthorizationException e) {
      server.getRpcMetrics().incrAuthorizationFailures();
      throw e;
    }
  }

  /** The bytes a handler's return value puts on the wire, without the stock frame's length. */
  static byte[] encodeValue(Writable value) throws IOException {
    if (value == null) {
      return new byte[0];
    }
    ResponseBuffer buffer = new ResponseBuffer();
    RpcWritable.wrap(value).writeTo(buffer);
    byte[] framed = buffer.toByteArray();
    return Arrays.copyOfRange(framed, 4, framed.length);
  }

  /** The connection id a stock client would use, with Hadoop's default connection retry policy. */
  public static Client.ConnectionId connectionId(InetSocketAddress address, Class<?> protocol,
      UserGroupInformation user, int rpcTimeout, org.apache.hadoop.io.retry.RetryPolicy retryPolicy,
      Configuration conf) throws IOException {
    return Client.ConnectionId.getConnectionId(address, protocol, user, rpcTimeout, retryPolicy, conf);
  }

  /** The address a connection id names. */
  public static InetSocketAddress address(Client.ConnectionId id) {
    return id.getAddress();
  }

  /** The user a connection id names. */
  public static UserGroupInformation ticket(Client.ConnectionId id) {
    return id.getTicket();
  }

  /** The call timeout of a connection id (0: none). */
  public static int rpcTimeout(Client.ConnectionId id) {
    return id.getRpcTimeout();
  }
}
