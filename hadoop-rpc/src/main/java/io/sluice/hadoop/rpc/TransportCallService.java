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
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.memory.AllocatorOptions;
import io.sluice.transport.memory.RegisteredAllocator;
import io.sluice.transport.metrics.LatencyHistogram;
import io.sluice.transport.metrics.TransportMetrics;
import java.io.IOException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * serves each call message by (1) authorizing the caller as the TCP listener would ({@link
 * CallerIdentities}), before anything of the body is READ, (2) fetching the request body, inline
 * or by READ from the caller's registered memory into memory bounded by {@code
 * sluice.rpc.server.maxIncomingBodyBytes}, (3) decoding it and queueing a {@link SluiceCall} on
 * the server's call queue, and (4) answering with the handler's response, written inline into the
 * answer or into registered memory only the caller may READ. Steps 1 to 3 run on the
 * transport's handler threads, or, once a body was READ, on this service's dispatch threads; never
 * on a selector thread, so host name look-ups, decoding and a full call queue stall no
 * connection's traffic. Bad frames fail the message with a clear error; the connection and the
 * server go on.
 *
 * <p>Thread safe: messages arrive on transport handler threads, READ bodies are dispatched on its
 * own threads and answers complete on the server's handler threads; the state is the transport and thread-safe helpers.
 * {@link #close()} closes them all.
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
  private final ExecutorService dispatch;
  private final ScheduledExecutorService timer;
  private final LongAdder calls = new LongAdder();
  private final LongAdder requestBodiesRead = new LongAdder();
  private final LongAdder responseBodiesPublished = new LongAdder();
  private final LongAdder authorizationFailures = new LongAdder();
  private final LatencyHistogram callTime = new LatencyHistogram();
  /** Set once the constructor is done: a message that races the start is refused, not half-served. */
  private volatile boolean ready;

  private TransportCallService(RPC.Server server, EngineSettings settings, long callerLifetimeMs)
      throws TransportException {
    this.server = server;
    this.settings = settings;
    this.callerIdentities = new CallerIdentities(server, callerLifetimeMs);
    int threads = settings.transportConfig().value(TransportKeys.HANDLER_THREADS);
    this.dispatch = Executors.newFixedThreadPool(threads, daemon("sluice-rpc-dispatch-"));
    this.timer = Executors.newSingleThreadScheduledExecutor(daemon("sluice-rpc-server-timer-"));
    Transport opened = null;
    try {
      opened = Transports.open(settings.transportConfig(), this::handle);
      this.transport = opened;
      this.memory = RegisteredAllocator.root("RPC server", transport);
      this.responses = new ResponseBodies(memory, 2 * settings.ioTimeoutMs(), timer);
      this.callers = new CallerConnections(transport, memory.newChild("request landing",
          AllocatorOptions.DEFAULTS.withReuse(RpcRegions.SIZES, RpcRegions.DESTINATION_IDLE_BYTES)
              .withLimit(settings.maxIncomingBodyBytes()).withReader(Transport.GRANTED_ONLY)),
          settings.callerConnectionIdleMs());
    } catch (TransportException | RuntimeException e) {
      dispatch.shutdownNow();
      timer.shutdownNow();
      if (opened != null) {
        opened.close();
      }
      throw e;
    }
    long period = Math.max(50, Math.min(settings.callerConnectionIdleMs() / 4, 1_000));
    timer.scheduleWithFixedDelay(() -> callers.closeIdle(System.nanoTime()), period, period, TimeUnit.MILLISECONDS);
    this.ready = true;
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
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
   * callers to READ, and of those, how many are not yet released; connections open back to
   * callers now; the most registered memory request bodies took at once.
   */
  record Stats(long calls, long requestBodiesRead, long responseBodiesPublished, int responseBodiesPending,
      int callerConnections, long peakIncomingBodyBytes, long authorizationFailures) {}

  Stats stats() {
    return new Stats(calls.sum(), requestBodiesRead.sum(), responseBodiesPublished.sum(), responses.pending(),
        callers.open(), callers.peakBytes(), authorizationFailures.sum());
  }

  /** The time from each call's arrival to its answer (queue, handler and, for a READ body, the READ). */
  LatencyHistogram.Snapshot callTime() {
    return callTime.snapshot();
  }

  /** The transport's own counters. */
  TransportMetrics transportMetrics() {
    return transport.metrics();
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
    long start = System.nanoTime();
    // The answer leaves once the returned stage completes, after the call's time is recorded: a
    // caller that has its answer finds the call in the metrics.
    return serveCall(peerNode, call).whenComplete((x, e) -> callTime.record(System.nanoTime() - start));
  }

  /** Checks, authorizes, queues and answers one call. */
  private CompletableFuture<ByteBuffer> serveCall(long peerNode, Call call) {
    byte[] inline;
    try {
      inline = checkBody(peerNode, call);
    } catch (IOException e) {
      return CompletableFuture.completedFuture(error(e, true));
    }
    CallerIdentities.Caller caller;
    try {
      caller = callerIdentities.authorize(new CallerIdentities.Key(
          peerNode, call.user(), call.realUser(), call.callerHost(), call.protocol()));
    } catch (UnknownHostException | IllegalArgumentException e) {
      return CompletableFuture.completedFuture(error(e, true));
    } catch (AuthorizationException e) {
      authorizationFailures.increment();
      LOG.info("Sluice RPC: call from {} for protocol {} is unauthorized for user {} (real user {})",
          call.callerHost(), call.protocol(), call.user(), call.realUser());
      return CompletableFuture.completedFuture(error(e, true));
    }
    if (inline != null) {
      SluiceCall queued;
      try {
        queued = queue(call, caller, inline);
      } catch (CompletionException e) {
        return CompletableFuture.completedFuture(error(unwrap(e), false));
      }
      // The outcome always completes normally, and answer() turns its own failures into an error
      // frame: one stage, run by the handler thread that finished the call.
      return queued.outcome().thenApply(outcome -> answer(peerNode, outcome));
    }
    CompletableFuture<SluiceCall> queued;
    try {
      // The wait for body memory and the READ's continuation run on dispatch threads: a READ
      // completes on a selector thread, which must never decode or wait for the call queue.
      queued = CompletableFuture.supplyAsync(() -> readBody(peerNode, call), dispatch)
          .thenCompose(body -> body)
          .thenApplyAsync(body -> queue(call, caller, body), dispatch);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new IOException("the RPC server's transport is closing"));
    }
    return queued.thenCompose(q -> q.outcome().thenApply(outcome -> answer(peerNode, outcome)))
        .exceptionally(t -> error(unwrap(t), false));
  }

  /**
   * Checks the body's size and owner from the frame alone; an inline body is copied now, since
   * the message is valid only during {@link #handle}.
   *
   * @return the inline body, or null for a body to READ
   */
  private byte[] checkBody(long peerNode, Call call) throws IOException {
    Body body = call.body();
    if (body.length() > settings.maxDataLength()) {
      throw new IOException("request body of " + body.length() + " bytes exceeds ipc.maximum.data.length ("
          + settings.maxDataLength() + ")");
    }
    if (body instanceof Inline in) {
      byte[] bytes = new byte[in.length()];
      in.bytes().duplicate().get(bytes);
      return bytes;
    }
    Remote remote = (Remote) body;
    if (remote.descriptor().node() != peerNode) {
      throw new IOException("request body names memory of node " + Long.toHexString(remote.descriptor().node())
          + ", not of the calling node " + Long.toHexString(peerNode));
    }
    return null;
  }

  /** After authorization: READs the body and copies it out of its landing region. */
  private CompletableFuture<byte[]> readBody(long peerNode, Call call) {
    Remote remote = (Remote) call.body();
    requestBodiesRead.increment();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.ioTimeoutMs());
    return callers.read(peerNode, new NodeAddress(call.callerHost(), call.callerPort()), remote, deadline)
        .thenApply(region -> {
          try {
            byte[] bytes = new byte[remote.length()];
            region.buffer().duplicate().clear().get(bytes);
            return bytes;
          } finally {
            callers.done(region);
          }
        });
  }

  /**
   * On a transport handler thread (inline body) or a dispatch thread (READ body): decodes the
   * body and queues the call, blocking while the call queue is full.
   */
  private SluiceCall queue(Call call, CallerIdentities.Caller caller, byte[] body) {
    try {
      Writable request = SluiceCalls.decodeRequest(body);
      SluiceCall queued = SluiceCalls.newCall(server, call.callId(), call.retryCount(), call.clientId(),
          call.protocol(), request, caller.user(), caller.address());
      SluiceCalls.queue(server, queued);
      return queued;
    } catch (IOException e) {
      throw new CompletionException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CompletionException(new IOException("interrupted while queueing the call"));
    }
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
      timer.shutdownNow();
      dispatch.shutdownNow();
      callers.close();
      responses.close();
      memory.shutdown(); // a READ still under way frees its region when it ends
    } finally {
      transport.close();
    }
  }
}
