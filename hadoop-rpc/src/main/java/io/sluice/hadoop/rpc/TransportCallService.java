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
import io.sluice.transport.memory.RegisteredAllocator;
import java.io.IOException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RpcServerException;
import org.apache.hadoop.ipc.SluiceCall;
import org.apache.hadoop.ipc.SluiceCallOutcome;
import org.apache.hadoop.ipc.SluiceCalls;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport side of a {@link SluiceRpcServer}: it owns the server's {@link Transport} and
 * serves each call message by (1) fetching the request body, inline or by READ from the caller's
 * registered memory, (2) authorizing the caller as the TCP listener would ({@link
 * CallerIdentities}), (3) queueing a {@link SluiceCall} on the server's call queue and (4)
 * answering with the handler's response, written inline into the answer or into registered memory
 * the caller READs. Bad frames fail the message with a clear error; the connection and the server
 * go on.
 *
 * <p>Thread safe: messages arrive on transport threads and answers complete on handler threads;
 * the state is the transport and thread-safe helpers. {@link #close()} closes them all.
 */
final class TransportCallService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportCallService.class);
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

  private final RPC.Server server;
  private final EngineSettings settings;
  private final CallerIdentities callerIdentities;
  private final RegisteredAllocator memory;
  private final ResponseBodies responses;
  private final CallerConnections callers;
  private final Transport transport;
  private final LongAdder calls = new LongAdder();
  private final LongAdder requestBodiesRead = new LongAdder();
  private final LongAdder responseBodiesPublished = new LongAdder();
  /** Set once the constructor is done: a message that races the start is refused, not half-served. */
  private volatile boolean ready;

  private TransportCallService(RPC.Server server, EngineSettings settings, long callerLifetimeMs)
      throws TransportException {
    this.server = server;
    this.settings = settings;
    this.callerIdentities = new CallerIdentities(server, callerLifetimeMs);
    this.transport = Transports.open(settings.transportConfig(), this::handle);
    this.memory = RegisteredAllocator.root("RPC server", transport);
    this.responses = new ResponseBodies(memory, 2 * settings.ioTimeoutMs());
    this.callers = new CallerConnections(transport,
        RpcRegions.pool(memory, "request landing", RpcRegions.DESTINATION_IDLE_BYTES));
    this.ready = true;
  }

  static TransportCallService open(RPC.Server server, EngineSettings settings, org.apache.hadoop.conf.Configuration conf)
      throws TransportException {
    long callerLifetimeMs = conf.getInt(CommonConfigurationKeysPublic.IPC_CLIENT_CONNECTION_MAXIDLETIME_KEY,
        CommonConfigurationKeysPublic.IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT);
    return new TransportCallService(server, settings, callerLifetimeMs);
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

  /** Forgets authorization decisions; the server's ACLs changed. */
  void forgetAuthorizedCallers() {
    callerIdentities.clear();
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
      responses.release(peerNode, release.released());
      return CompletableFuture.completedFuture(RpcFrames.encode(Response.ok(new Inline(EMPTY))));
    }
    Call call = (Call) request;
    responses.release(peerNode, call.released());
    calls.increment();
    CompletableFuture<byte[]> body;
    try {
      body = fetchBody(peerNode, call);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(error(e, true));
    }
    return body.thenCompose(bytes -> dispatch(peerNode, call, bytes))
        .exceptionally(t -> error(unwrap(t), false));
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

  private CompletableFuture<ByteBuffer> dispatch(long peerNode, Call call, byte[] body) {
    CallerIdentities.Caller caller;
    try {
      caller = callerIdentities.authorize(new CallerIdentities.Key(
          peerNode, call.user(), call.realUser(), call.callerHost(), call.protocol()));
    } catch (UnknownHostException | IllegalArgumentException e) {
      return CompletableFuture.completedFuture(error(e, true));
    } catch (AuthorizationException e) {
      LOG.info("Sluice RPC: call from {} for protocol {} is unauthorized for user {} (real user {})",
          call.callerHost(), call.protocol(), call.user(), call.realUser());
      return CompletableFuture.completedFuture(error(e, true));
    }
    SluiceCall queued;
    try {
      Writable request = SluiceCalls.decodeRequest(body);
      queued = SluiceCalls.newCall(server, call.callId(), call.retryCount(), call.clientId(),
          call.protocol(), request, caller.user(), caller.address());
      SluiceCalls.queue(server, queued);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(error(e, false));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CompletableFuture.completedFuture(error(new IOException("interrupted while queueing the call"), false));
    }
    return queued.outcome().thenApply(outcome -> answer(peerNode, outcome));
  }

  /** The answer frame: the response written inline, or into registered memory for the caller to READ. */
  private ByteBuffer answer(long peerNode, SluiceCallOutcome outcome) {
    if (!outcome.isSuccess()) {
      return RpcFrames.encode(Response.error(outcome.errorClass(), outcome.errorMessage(), outcome.fatal()));
    }
    try {
      int length = outcome.bodyLength();
      if (length <= settings.readThreshold()) {
        ByteBuffer frame = RpcFrames.inlineResponse(length);
        outcome.writeBody(frame);
        return frame.flip();
      }
      Remote remote = responses.publish(peerNode, outcome);
      responseBodiesPublished.increment();
      return RpcFrames.encode(Response.ok(remote));
    } catch (IOException | RuntimeException e) {
      return error(e, false);
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  private static ByteBuffer error(Throwable t, boolean fatal) {
    boolean isFatal = fatal || (t instanceof RpcServerException rse
        && rse.getRpcStatusProto().name().equals("FATAL"));
    return RpcFrames.encode(Response.error(t.getClass().getName(), String.valueOf(t.getMessage()), isFatal));
  }

  @Override
  public void close() {
    try {
      callers.close();
      responses.close();
      memory.shutdown(); // a READ still under way frees its region when it ends
    } finally {
      transport.close();
    }
  }
}
