package org.apache.hadoop.ipc;

import java.lang.reflect.UndeclaredThrowableException;
import java.net.InetAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.ipc.ProcessingDetails.Timing;
import org.apache.hadoop.ipc.protobuf.RpcHeaderProtos.RpcResponseHeaderProto.RpcStatusProto;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.StringUtils;
import org.apache.hadoop.util.Time;

/**
 * A call that arrived over the Sluice transport, queued on an {@link RPC.Server}'s own call
 * queue and run by its handler threads exactly as a call from its TCP listener: the handler sets
 * it as the current call (so {@link Server#getRemoteUser()}, {@link Server#getCallId()} and
 * {@link Server#getClientId()} answer for it, which the retry cache relies on), runs it as the
 * remote user, and updates the RPC metrics. It lives in Hadoop's ipc package because {@link
 * Server.Call}'s constructor and response hooks are package-private.
 *
 * <p>The outcome goes to {@link #outcome()} once, whether the handler answers at once, the
 * protocol defers its response, or the call is aborted. Thread safe: the outcome future is the
 * only state shared between the handler and the transport thread that waits for it.
 */
public final class SluiceCall extends Server.Call {
  private final RPC.Server server;
  private final String protocolName;
  private final Writable request;
  private final UserGroupInformation user;
  private final InetAddress remoteAddress;
  private final CompletableFuture<SluiceCallOutcome> outcome = new CompletableFuture<>();

  SluiceCall(RPC.Server server, int callId, int retryCount, byte[] clientId, String protocolName,
      Writable request, UserGroupInformation user, InetAddress remoteAddress) {
    super(callId, retryCount, RPC.RpcKind.RPC_PROTOCOL_BUFFER, clientId);
    this.server = server;
    this.protocolName = protocolName;
    this.request = request;
    this.user = user;
    this.remoteAddress = remoteAddress;
  }

  /** Completes with the response body or the error, exactly once. */
  public CompletableFuture<SluiceCallOutcome> outcome() {
    return outcome;
  }

  @Override
  public UserGroupInformation getRemoteUser() {
    return user;
  }

  @Override
  public InetAddress getHostInetAddress() {
    return remoteAddress;
  }

  @Override
  public String getProtocol() {
    return "sluice";
  }

  @Override
  public Void run() throws Exception {
    long startNanos = Time.monotonicNowNanos();
    Writable value = null;
    Throwable failure = null;
    try {
      value = server.call(rpcKind, protocolName, request, getTimestampNanos());
    } catch (Throwable t) {
      failure = t;
    }
    if (isResponseDeferred()) {
      return null;
    }
    ProcessingDetails details = getProcessingDetails();
    long deltaNanos = Time.monotonicNowNanos() - startNanos;
    details.set(Timing.PROCESSING, deltaNanos, TimeUnit.NANOSECONDS);
    deltaNanos -= details.get(Timing.LOCKWAIT, TimeUnit.NANOSECONDS);
    deltaNanos -= details.get(Timing.LOCKSHARED, TimeUnit.NANOSECONDS);
    deltaNanos -= details.get(Timing.LOCKEXCLUSIVE, TimeUnit.NANOSECONDS);
    details.set(Timing.LOCKFREE, deltaNanos, TimeUnit.NANOSECONDS);
    long responseStart = Time.monotonicNowNanos();
    if (failure != null) {
      details.setReturnStatus(RpcStatusProto.ERROR);
      outcome.complete(error(failure));
    } else {
      details.setReturnStatus(RpcStatusProto.SUCCESS);
      outcome.complete(success(value));
    }
    details.set(Timing.RESPONSE, Time.monotonicNowNanos() - responseStart, TimeUnit.NANOSECONDS);
    return null;
  }

  @Override
  public void setDeferredResponse(Writable response) {
    outcome.complete(success(response));
  }

  @Override
  public void setDeferredError(Throwable t) {
    outcome.complete(error(t == null
        ? new java.io.IOException("User code indicated an error without an exception") : t));
  }

  @Override
  void doResponse(Throwable t, RpcStatusProto status) {
    // Reached through abortResponse (or a requeue that failed): the call ends with this error.
    outcome.complete(error(t == null ? new java.io.IOException("call aborted without a cause") : t));
  }

  private SluiceCallOutcome success(Writable value) {
    try {
      return SluiceCallOutcome.success(value);
    } catch (Throwable t) {
      return error(t);
    }
  }

  private SluiceCallOutcome error(Throwable t) {
    if (t instanceof UndeclaredThrowableException && t.getCause() != null) {
      t = t.getCause();
    }
    server.logException(Server.LOG, t, this);
    boolean fatal = t instanceof RpcServerException
        && ((RpcServerException) t).getRpcStatusProto() == RpcStatusProto.FATAL;
    String errorClass = t.getClass().getName();
    // As the stock server: the message is the stack trace without the leading class name.
    String message = StringUtils.stringifyException(t);
    if (message.startsWith(errorClass + ": ")) {
      message = message.substring(errorClass.length() + 2);
    }
    return SluiceCallOutcome.error(errorClass, message, fatal);
  }

  @Override
  public String toString() {
    return "Sluice " + super.toString() + " " + protocolName + " from " + user;
  }
}
