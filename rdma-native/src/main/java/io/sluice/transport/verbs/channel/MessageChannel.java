package io.sluice.transport.verbs.channel;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportException;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import io.sluice.transport.verbs.rc.RdmaRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two-sided messages over one queue pair ({@link ChannelFrames}). One registered buffer
 * holds the receive slots, all posted at {@link #start()} and each posted again as soon as its
 * frame is copied out; and the send slots: a frame is copied into a free send slot and sent,
 * or waits in order for one. Every {@value #SIGNAL_EVERY}th SEND is signaled, and the one
 * that takes the last free slot; its completion frees the slots of the SENDs before it. Each
 * slot's work request is built once and reposted with only its length changed. Messages too large for a frame are staged: copied into
 * memory registered for the occasion, which the peer READs on the same queue pair ({@link
 * #stage}, {@link #fetch}).
 *
 * <p>The peer never sends more frames than this side has receives posted because both sides
 * follow the credit rules of the subclasses (at most the credit of requests unanswered, plus
 * one release each); the queue pair retries a SEND that finds no receive rather than failing.
 *
 * <p>When the queue pair fails or closes, the subclass is told ({@link #failed}) and then the
 * slots are freed. Thread safe; frames are handled on a completion thread, in order.
 */
abstract class MessageChannel {
  private static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);
  private static final int SLOT = ChannelFrames.SLOT_BYTES;
  static final int SIGNAL_EVERY = 8;

  /** Memory registered for one staged message; the owner closes it. */
  static final class Staging implements AutoCloseable {
    private final ByteBuffer memory;
    private final RdmaRegion region;

    private Staging(ByteBuffer memory, RdmaRegion region) {
      this.memory = memory;
      this.region = region;
    }

    ChannelFrames.Staged descriptor() {
      return new ChannelFrames.Staged(region.address(), region.rkey(), memory.capacity());
    }

    @Override
    public void close() {
      region.close();
      DirectMemory.free(memory);
    }
  }

  protected final RdmaQueuePair queuePair;
  protected final int maxMessageBytes;
  private final RdmaNode node;
  private final ByteBuffer memory;
  private final RdmaRegion region;
  private final int receiveSlots;
  /** Guarded by this. */
  private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
  private final ArrayDeque<ByteBuffer> waitingFrames = new ArrayDeque<>();
  private int sinceSignaled;
  private boolean closed;
  /** Prepared work requests by slot number: receives first, then sends. Set by start(). */
  private volatile RdmaQueuePair.ReceiveSlot[] receives;
  private volatile RdmaQueuePair.SendSlot[] sends;

  MessageChannel(RdmaNode node, RdmaQueuePair queuePair, int receiveSlots, int sendSlots, int maxMessageBytes)
      throws IOException {
    this.node = node;
    this.queuePair = queuePair;
    this.maxMessageBytes = maxMessageBytes;
    this.receiveSlots = receiveSlots;
    this.memory = ByteBuffer.allocateDirect((receiveSlots + sendSlots) * SLOT);
    try {
      this.region = node.registerLocal(memory);
    } catch (IOException | RuntimeException e) {
      DirectMemory.free(memory);
      throw e;
    }
    for (int i = 0; i < sendSlots; i++) {
      freeSendSlots.add(receiveSlots + i);
    }
  }

  /** Builds every slot's work request, posts every receive slot and starts watching the queue pair. */
  void start() throws IOException {
    receives = new RdmaQueuePair.ReceiveSlot[receiveSlots];
    for (int slot = 0; slot < receiveSlots; slot++) {
      int s = slot;
      receives[slot] = queuePair.prepareReceive(slotAddress(slot), SLOT, region.lkey(), n -> received(s, n));
    }
    int sendSlots;
    synchronized (this) {
      sendSlots = freeSendSlots.size();
    }
    sends = new RdmaQueuePair.SendSlot[sendSlots];
    for (int i = 0; i < sendSlots; i++) {
      sends[i] = queuePair.prepareSend(slotAddress(receiveSlots + i), SLOT, region.lkey());
    }
    queuePair.onFailure(this::queuePairFailed);
    for (RdmaQueuePair.ReceiveSlot r : receives) {
      queuePair.receive(r);
    }
  }

  private long slotAddress(int slot) {
    return region.address() + (long) slot * SLOT;
  }

  boolean isOpen() {
    synchronized (this) {
      return !closed && queuePair.isOpen();
    }
  }


  private void received(int slot, int byteLength) {
    ChannelFrames.Frame frame;
    synchronized (this) {
      if (closed) {
        return;
      }
      ByteBuffer view = memory.duplicate().position(slot * SLOT).limit(slot * SLOT + Math.min(byteLength, SLOT));
      try {
        frame = ChannelFrames.decode(view, maxMessageBytes);
      } catch (ProtocolException e) {
        frame = null;
        protocolViolation(e.getMessage());
      }
    }
    if (frame != null) {
      queuePair.receive(receives[slot]);
      onFrame(frame);
    }
  }

  /** Handles one frame from the peer, on a completion thread; must not block. */
  abstract void onFrame(ChannelFrames.Frame frame);

  /** The queue pair failed or closed: fail what is outstanding and free staged memory. */
  abstract void failed(TransportException cause);

  /** Sends one frame (at most a slot), now or once a send slot is free; dropped once closed. */
  final void send(ByteBuffer frame) {
    synchronized (this) {
      if (closed) {
        return;
      }
      Integer slot = freeSendSlots.poll();
      if (slot == null) {
        waitingFrames.add(frame);
        return;
      }
      post(slot, frame);
    }
  }

  /** Copies the frame into its slot and posts it. Holds this. */
  private void post(int slot, ByteBuffer frame) {
    int length = frame.remaining();
    memory.duplicate().position(slot * SLOT).put(frame.duplicate());
    boolean signaled = ++sinceSignaled >= SIGNAL_EVERY || freeSendSlots.isEmpty();
    if (signaled) {
      sinceSignaled = 0;
    }
    queuePair.send(sends[slot - receiveSlots], length, signaled).whenComplete((x, e) -> slotFree(slot));
  }

  private void slotFree(int slot) {
    synchronized (this) {
      if (closed) {
        return;
      }
      ByteBuffer next = waitingFrames.poll();
      if (next != null) {
        post(slot, next);
      } else {
        freeSendSlots.add(slot);
      }
    }
  }

  /** Copies {@code message}'s remaining bytes into newly registered memory the peer may READ. */
  final Staging stage(ByteBuffer message) throws IOException {
    ByteBuffer copy = ByteBuffer.allocateDirect(message.remaining());
    copy.put(message.duplicate()).flip();
    try {
      return new Staging(copy, node.register(copy));
    } catch (IOException | RuntimeException e) {
      DirectMemory.free(copy);
      throw e;
    }
  }

  /** READs a staged message of the peer into a new heap buffer. */
  final CompletableFuture<ByteBuffer> fetch(ChannelFrames.Staged staged) {
    ByteBuffer landing = ByteBuffer.allocateDirect(staged.length());
    RdmaRegion target;
    try {
      target = node.registerLocal(landing);
    } catch (IOException | RuntimeException e) {
      DirectMemory.free(landing);
      return CompletableFuture.failedFuture(e);
    }
    RdmaRead read = new RdmaRead(staged.address(), staged.rkey(), target.address(), target.lkey(), staged.length());
    return queuePair.readBatch(List.of(read)).get(0).handle((x, e) -> {
      try {
        if (e != null) {
          throw new java.util.concurrent.CompletionException(e);
        }
        return ByteBuffer.allocate(staged.length()).put(landing.duplicate().clear()).flip();
      } finally {
        target.close();
        DirectMemory.free(landing);
      }
    });
  }

  /** The peer broke the protocol: log it once and finish the queue pair. */
  final void protocolViolation(String what) {
    LOG.warn("closing the message channel to {}: {}", queuePair.peer(), what);
    queuePair.close();
  }

  private void queuePairFailed(TransportException cause) {
    synchronized (this) {
      closed = true;
      waitingFrames.clear();
    }
    try {
      failed(cause);
    } finally {
      // The queue pair is in the error state: the device touches none of the slots any more.
      synchronized (this) {
        region.close();
        DirectMemory.free(memory);
      }
    }
  }

  /** Closes the queue pair; outstanding work fails through {@link #failed}. */
  void close() {
    queuePair.close();
  }
}
