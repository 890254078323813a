package io.sluice.transport.verbs.channel;

import io.sluice.transport.MessageTooLargeException;
import io.sluice.transport.TransportException;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.wire.ErrorCode;
import io.sluice.transport.wire.Frames;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The answering end of a message channel, on a queue pair accepted from an authenticated
 * peer: hands each request to the message handler and sends its answer, inline or staged. A
 * peer that has more than its credit of requests unanswered, or leaves more than its credit
 * of staged responses unreleased, breaks the protocol and loses the queue pair.
 *
 * <p>Thread safe; frames arrive on a completion thread, handlers answer on theirs.
 */
public final class ResponderChannel extends MessageChannel {

  /** Receive slots for a peer credit of {@code credit}: a request and a release for each, one to spare. */
  public static int receiveSlots(int credit) {
    return 2 * credit + 1;
  }

  /** Send slots (more frames wait for a free one). */
  public static int sendSlots(int credit) {
    return credit + 1;
  }

  private final int credit;
  private final BiFunction<Long, ByteBuffer, CompletableFuture<ByteBuffer>> handler;
  private final long peerNode;
  /** Guarded by this. */
  private final Map<Integer, Staging> stagedResponses = new HashMap<>();
  private int unanswered;
  private boolean failed;

  private ResponderChannel(RdmaNode node, RdmaQueuePair queuePair, int credit, int maxMessageBytes, long peerNode,
      BiFunction<Long, ByteBuffer, CompletableFuture<ByteBuffer>> handler) throws IOException {
    super(node, queuePair, receiveSlots(credit), sendSlots(credit), maxMessageBytes);
    this.credit = credit;
    this.peerNode = peerNode;
    this.handler = handler;
  }

  /**
   * Opens the channel on a queue pair (before it is accepted) for the authenticated peer
   * {@code peerNode}; {@code handler} runs the application's message handler asynchronously.
   */
  public static ResponderChannel open(RdmaNode node, RdmaQueuePair queuePair, int credit, int maxMessageBytes,
      long peerNode, BiFunction<Long, ByteBuffer, CompletableFuture<ByteBuffer>> handler) throws IOException {
    ResponderChannel channel = new ResponderChannel(node, queuePair, credit, maxMessageBytes, peerNode, handler);
    channel.start();
    return channel;
  }

  @Override
  void onFrame(ChannelFrames.Frame frame) {
    int corr = frame.correlationId();
    switch (frame.type()) {
      case REQUEST -> {
        if (admit()) {
          handle(corr, frame.body());
        }
      }
      case REQUEST_STAGED -> {
        if (admit()) {
          fetch(frame.staged()).whenComplete((body, e) -> {
            if (e != null) {
              protocolViolation("reading a staged request failed: " + e);
            } else {
              handle(corr, body);
            }
          });
        }
      }
      case RELEASE -> {
        Staging staged;
        synchronized (this) {
          staged = stagedResponses.remove(corr);
        }
        if (staged == null) {
          protocolViolation("RELEASE of response " + corr + ", which is not staged");
        } else {
          staged.close();
        }
      }
      default -> protocolViolation(frame.type() + " frame from the requesting side");
    }
  }

  /** Counts a request against the peer's credit; false (and the queue pair closed) if over. */
  private boolean admit() {
    synchronized (this) {
      if (unanswered < credit) {
        unanswered++;
        return true;
      }
    }
    protocolViolation("peer exceeded its credit of " + credit + " requests in flight");
    return false;
  }

  private void handle(int corr, ByteBuffer request) {
    CompletableFuture<ByteBuffer> answer;
    try {
      answer = handler.apply(peerNode, request);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete((response, error) -> {
      // The credit returns before the answer is sent: the peer may send its next request as
      // soon as it has this answer.
      synchronized (this) {
        unanswered--;
      }
      if (error != null) {
        Frames.ErrorFrame failure = Frames.ErrorFrame.ofHandlerFailure(error);
        send(ChannelFrames.error(corr, failure.code(), failure.message()));
      } else if (response == null) {
        send(ChannelFrames.error(corr, ErrorCode.HANDLER_FAILED, "handler returned no response"));
      } else if (response.remaining() > maxMessageBytes) {
        send(ChannelFrames.error(corr, ErrorCode.MESSAGE_TOO_LARGE, new MessageTooLargeException(
            "response of " + response.remaining() + " bytes exceeds " + maxMessageBytes).getMessage()));
      } else if (response.remaining() <= ChannelFrames.INLINE_BYTES) {
        send(ChannelFrames.inline(ChannelFrames.Type.RESPONSE, corr, response));
      } else {
        sendStaged(corr, response);
      }
    });
  }

  private void sendStaged(int corr, ByteBuffer response) {
    Staging staged;
    try {
      staged = stage(response);
    } catch (IOException | RuntimeException e) {
      send(ChannelFrames.error(corr, ErrorCode.HANDLER_FAILED, "cannot stage a response of "
          + response.remaining() + " bytes: " + e.getMessage()));
      return;
    }
    boolean keep;
    boolean over;
    synchronized (this) {
      over = stagedResponses.size() >= credit;
      keep = !failed && !over;
      if (keep) {
        stagedResponses.put(corr, staged);
      }
    }
    if (!keep) {
      staged.close();
      if (over) {
        protocolViolation("peer left more than " + credit + " staged responses unreleased");
      }
      return;
    }
    send(ChannelFrames.staged(ChannelFrames.Type.RESPONSE_STAGED, corr, staged.descriptor()));
  }

  @Override
  void failed(TransportException cause) {
    List<Staging> all;
    synchronized (this) {
      failed = true;
      all = new ArrayList<>(stagedResponses.values());
      stagedResponses.clear();
    }
    all.forEach(Staging::close);
  }
}
