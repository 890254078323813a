package io.sluice.transport.verbs.channel;

import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The requesting end of a message channel. At most {@code credit} requests are unanswered at
 * the peer; more wait here in order. A request's credit returns when its answer arrives (a
 * request that timed out keeps it until then, since the peer still counts it). A staged
 * request's memory is freed with its answer; a staged response is READ, then released with a
 * RELEASE frame sent before the credit is used again.
 *
 * <p>Every request fails after the I/O timeout; every outstanding request fails with {@link
 * PeerClosedException} when the queue pair does. Thread safe; answers complete futures on a
 * completion thread.
 */
public final class RequestChannel extends MessageChannel {

  /** Receive slots for a credit of {@code credit} requests: one answer each, and one to spare. */
  public static int receiveSlots(int credit) {
    return credit + 1;
  }

  /** Send slots (more frames wait for a free one). */
  public static int sendSlots(int credit) {
    return credit + 1;
  }

  private static final class Request {
    final ByteBuffer message;
    /** A caller waiting on it polls the completion queues itself first (RdmaNode#newFuture). */
    final CompletableFuture<ByteBuffer> future;
    ScheduledFuture<?> timeout;
    int correlationId;
    Staging staged;

    Request(ByteBuffer message, CompletableFuture<ByteBuffer> future) {
      this.message = message;
      this.future = future;
    }
  }

  private final ScheduledExecutorService timer;
  private final long timeoutNanos;
  /** Guarded by this. */
  private final Map<Integer, Request> unanswered = new HashMap<>();
  private final ArrayDeque<Request> waiting = new ArrayDeque<>();
  private int credit;
  private int nextCorrelationId;
  private TransportException failure;

  private RequestChannel(RdmaNode node, RdmaQueuePair queuePair, int credit, int maxMessageBytes,
      ScheduledExecutorService timer, long timeoutNanos) throws IOException {
    super(node, queuePair, receiveSlots(credit), sendSlots(credit), maxMessageBytes);
    this.credit = credit;
    this.timer = timer;
    this.timeoutNanos = timeoutNanos;
  }

  /**
   * Opens the channel on a connected queue pair of {@code sizes} at least {@link
   * #receiveSlots} and {@link #sendSlots}; closing the queue pair closes the channel.
   */
  public static RequestChannel open(RdmaNode node, RdmaQueuePair queuePair, int credit, int maxMessageBytes,
      ScheduledExecutorService timer, long timeoutNanos) throws IOException {
    RequestChannel channel = new RequestChannel(node, queuePair, credit, maxMessageBytes, timer, timeoutNanos);
    channel.start();
    return channel;
  }

  /**
   * Sends a copy of {@code message}'s remaining bytes (the buffer is not moved) and completes
   * with the answer, or exceptionally: {@link MessageTooLargeException}, the peer's error,
   * {@link TransportTimeoutException}, {@link PeerClosedException}.
   */
  public CompletableFuture<ByteBuffer> request(ByteBuffer message) {
    if (message.remaining() > maxMessageBytes) {
      return CompletableFuture.failedFuture(new MessageTooLargeException(
          "request of " + message.remaining() + " bytes exceeds " + maxMessageBytes));
    }
    Request r = new Request(ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip(), node.newFuture());
    r.timeout = timer.schedule(() -> timedOut(r), timeoutNanos, TimeUnit.NANOSECONDS);
    r.future.whenComplete((x, e) -> r.timeout.cancel(false));
    synchronized (this) {
      if (failure != null) {
        r.future.completeExceptionally(closed(failure));
      } else if (credit > 0) {
        credit--;
        dispatch(r);
      } else {
        waiting.add(r);
      }
    }
    return r.future;
  }

  /** Sends a request that holds a credit. Holds this. */
  private void dispatch(Request r) {
    r.correlationId = nextCorrelationId++;
    unanswered.put(r.correlationId, r);
    if (r.message.remaining() <= ChannelFrames.INLINE_BYTES) {
      send(ChannelFrames.inline(ChannelFrames.Type.REQUEST, r.correlationId, r.message));
      return;
    }
    try {
      r.staged = stage(r.message);
    } catch (IOException | RuntimeException e) {
      // Nothing reached the peer: the credit is free again.
      unanswered.remove(r.correlationId);
      r.future.completeExceptionally(new TransportException("cannot stage a request of "
          + r.message.remaining() + " bytes: " + e.getMessage(), e));
      passCredit();
      return;
    }
    send(ChannelFrames.staged(ChannelFrames.Type.REQUEST_STAGED, r.correlationId, r.staged.descriptor()));
  }

  private void timedOut(Request r) {
    boolean failed = r.future.completeExceptionally(new TransportTimeoutException(
        "no answer from " + queuePair.peer() + " within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms"));
    if (failed) {
      synchronized (this) {
        waiting.remove(r); // one that was sent keeps its credit until the peer answers
      }
    }
  }

  @Override
  void onFrame(ChannelFrames.Frame frame) {
    Request r;
    synchronized (this) {
      r = unanswered.get(frame.correlationId());
    }
    if (r == null || frame.type() == ChannelFrames.Type.REQUEST || frame.type() == ChannelFrames.Type.REQUEST_STAGED
        || frame.type() == ChannelFrames.Type.RELEASE) {
      protocolViolation(frame.type() + " frame for request " + frame.correlationId() + ", which is not waiting");
      return;
    }
    switch (frame.type()) {
      case RESPONSE -> {
        answered(r);
        r.future.complete(frame.body());
      }
      case ERROR -> {
        answered(r);
        r.future.completeExceptionally(frame.errorCode().toException(frame.errorText()));
      }
      default -> fetch(frame.staged()).whenComplete((body, e) -> {
        if (e != null) {
          // The queue pair failed (and with it this request), or no memory could be
          // registered to land the response: then the channel cannot go on either.
          protocolViolation("reading a staged response failed: " + e);
          return;
        }
        send(ChannelFrames.release(frame.correlationId()));
        answered(r);
        r.future.complete(body);
      });
    }
  }

  /** The answer to {@code r} is in: its credit passes to the next waiting request. */
  private void answered(Request r) {
    synchronized (this) {
      if (unanswered.remove(r.correlationId) == null) {
        return;
      }
      if (r.staged != null) {
        r.staged.close();
      }
      passCredit();
    }
  }

  /** A credit came free: the next waiting request that has not timed out takes it. Holds this. */
  private void passCredit() {
    Request next;
    while ((next = waiting.poll()) != null && next.future.isDone()) {
      // timed out while waiting
    }
    if (next != null) {
      dispatch(next);
    } else {
      credit++;
    }
  }

  @Override
  void failed(TransportException cause) {
    List<Request> all;
    synchronized (this) {
      failure = cause;
      all = new ArrayList<>(unanswered.values());
      all.addAll(waiting);
      unanswered.clear();
      waiting.clear();
    }
    for (Request r : all) {
      if (r.staged != null) {
        r.staged.close();
      }
      r.future.completeExceptionally(closed(cause));
    }
  }

  private PeerClosedException closed(TransportException cause) {
    return cause instanceof PeerClosedException p ? p
        : new PeerClosedException("the message channel to " + queuePair.peer() + " failed: " + cause.getMessage(), cause);
  }
}
