package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.RpcFrames.Body;
import io.sluice.hadoop.rpc.RpcFrames.Call;
import io.sluice.hadoop.rpc.RpcFrames.Inline;
import io.sluice.hadoop.rpc.RpcFrames.MalformedFrameException;
import io.sluice.hadoop.rpc.RpcFrames.Release;
import io.sluice.hadoop.rpc.RpcFrames.Remote;
import io.sluice.hadoop.rpc.RpcFrames.Request;
import io.sluice.hadoop.rpc.RpcFrames.Response;
import io.sluice.transport.NodeAddress;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RpcServerException;
import org.apache.hadoop.ipc.SluiceCall;
import org.apache.hadoop.ipc.SluiceCallOutcome;
import org.apache.hadoop.ipc.SluiceCalls;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.ProxyUsers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport side of a {@link SluiceRpcServer}: it owns the server's {@link Transport} and
 * serves each call message by (1) fetching the request body, inline or by READ from the caller's
 * registered memory, (2) authorizing the caller's user as the TCP listener would (proxy users,
 * then service-level authorization), (3) queueing a {@link SluiceCall} on the server's call queue
 * and (4) answering with the handler's response, inline or from registered memory the caller
 * READs. Bad frames fail the message with a clear error; the connection and the server go on.
 *
 * <p>Thread safe: messages arrive on transport threads; the state is the transport and the two
 * thread-safe helpers. {@link #close()} closes all three.
 */
final class TransportCallService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportCallService.class);
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final RPC.Server server;
  private final EngineSettings settings;
  private final ResponseBodies responses;
  private final CallerConnections callers;
  private final Transport transport;
  private final LongAdder calls = new LongAdder();
  private final LongAdder requestBodiesRead = new LongAdder();
  private final LongAdder responseBodiesPublished = new LongAdder();
  /** Set once the constructor is done: a message that races the start is refused, not half-served. */
  private volatile boolean ready;

  private TransportCallService(RPC.Server server, EngineSettings settings) throws TransportException {
    this.server = server;
    this.settings = settings;
    this.transport = Transports.open(settings.transportConfig(), this::handle);
    this.responses = new ResponseBodies(transport, 2 * settings.ioTimeoutMs());
    this.callers = new CallerConnections(transport);
    this.ready = true;
  }

  static TransportCallService open(RPC.Server server, EngineSettings settings) throws TransportException {
    return new TransportCallService(server, settings);
  }

  NodeAddress address() {
    return transport.localAddress();
  }

  long nodeId() {
    return transport.nodeId();
  }

  String provider() {
    return transport.provider();
  }

  /**
   * Counts since start: calls served, request bodies READ from callers, response bodies left for
   * callers to READ, and of those, how many are not yet released.
   */
  record Stats(long calls, long requestBodiesRead, long responseBodiesPublished, int responseBodiesPending) {}

  Stats stats() {
    return new Stats(calls.sum(), requestBodiesRead.sum(), responseBodiesPublished.sum(), responses.pending());
  }

  private CompletableFuture<ByteBuffer> handle(long peerNode, ByteBuffer message) {
    if (!ready) {
      return CompletableFuture.failedFuture(new IOException("the RPC server's transport is still starting"));
    }
    Request request;
    try {
      request = RpcFrames.decodeRequest(message);
    } catch (MalformedFrameException e) {
      LOG.warn("Sluice RPC: rejected a message from node {}: {}", Long.toHexString(peerNode), e.getMessage());
      return CompletableFuture.failedFuture(e);
    }
    if (request instanceof Release release) {
      responses.release(peerNode, release.bodyId());
      return CompletableFuture.completedFuture(RpcFrames.encode(Response.ok(new Inline(EMPTY))));
    }
    Call call = (Call) request;
    calls.increment();
    CompletableFuture<byte[]> body;
    try {
      body = fetchBody(peerNode, call);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(RpcFrames.encode(error(e, true)));
    }
    return body.thenCompose(bytes -> dispatch(peerNode, call, bytes))
        .exceptionally(t -> error(unwrap(t), false))
        .thenApply(RpcFrames::encode);
  }

  /** The request body; an inline body is copied now, since the message is valid only during handle. */
  private CompletableFuture<byte[]> fetchBody(long peerNode, Call call) throws IOException {
    Body body = call.body();
    if (body.length() > settings.maxDataLength()) {
      throw new IOException("request body of " + body.length() + " bytes exceeds ipc.maximum.data.length ("
          + settings.maxDataLength() + ")");
    }
    if (body instanceof Inline inline) {
      byte[] bytes = new byte[inline.length()];
      inline.bytes().duplicate().get(bytes);
      return CompletableFuture.completedFuture(bytes);
    }
    Remote remote = (Remote) body;
    if (remote.descriptor().node() != peerNode) {
      throw new IOException("request body names memory of node " + Long.toHexString(remote.descriptor().node())
          + ", not of the calling node " + Long.toHexString(peerNode));
    }
    requestBodiesRead.increment();
    return callers.read(peerNode, new NodeAddress(call.callerHost(), call.callerPort()), remote);
  }

  private CompletableFuture<Response> dispatch(long peerNode, Call call, byte[] body) {
    InetAddress address;
    UserGroupInformation user;
    try {
      address = InetAddress.getByName(call.callerHost());
      user = userOf(call);
    } catch (UnknownHostException | IllegalArgumentException e) {
      return CompletableFuture.completedFuture(error(e, true));
    }
    try {
      if (user.getRealUser() != null) {
        ProxyUsers.authorize(user, address.getHostAddress());
      }
      SluiceCalls.authorize(server, user, call.protocol(), address);
    } catch (AuthorizationException e) {
      LOG.info("Sluice RPC: call from {} for protocol {} is unauthorized for user {}", address,
          call.protocol(), user);
      return CompletableFuture.completedFuture(Response.error(e.getClass().getName(), e.getMessage(), true));
    }
    SluiceCall queued;
    try {
      Writable request = SluiceCalls.decodeRequest(body);
      queued = SluiceCalls.newCall(server, call.callId(), call.retryCount(), call.clientId(),
          call.protocol(), request, user, address);
      SluiceCalls.queue(server, queued);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(error(e, false));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CompletableFuture.completedFuture(error(new IOException("interrupted while queueing the call"), false));
    }
    return queued.outcome().thenApply(outcome -> response(peerNode, outcome));
  }

  private Response response(long peerNode, SluiceCallOutcome outcome) {
    if (!outcome.isSuccess()) {
      return Response.error(outcome.errorClass(), outcome.errorMessage(), outcome.fatal());
    }
    byte[] body = outcome.body();
    if (body.length <= settings.readThreshold()) {
      return Response.ok(new Inline(ByteBuffer.wrap(body)));
    }
    try {
      Response published = Response.ok(responses.publish(peerNode, body));
      responseBodiesPublished.increment();
      return published;
    } catch (TransportException e) {
      return error(e, false);
    }
  }

  /** The caller's user as the TCP listener builds it under simple authentication. */
  private static UserGroupInformation userOf(Call call) {
    UserGroupInformation effective;
    if (call.realUser() == null) {
      effective = UserGroupInformation.createRemoteUser(call.user(), SaslRpcServer.AuthMethod.SIMPLE);
    } else {
      UserGroupInformation real = UserGroupInformation.createRemoteUser(call.realUser(), SaslRpcServer.AuthMethod.SIMPLE);
      effective = UserGroupInformation.createProxyUser(call.user(), real);
    }
    return effective;
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  private static Response error(Throwable t, boolean fatal) {
    boolean isFatal = fatal || (t instanceof RpcServerException rse
        && rse.getRpcStatusProto().name().equals("FATAL"));
    return Response.error(t.getClass().getName(), String.valueOf(t.getMessage()), isFatal);
  }

  @Override
  public void close() {
    try {
      callers.close();
      responses.close();
    } finally {
      transport.close();
    }
  }
}
