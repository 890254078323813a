package io.sluice.transport.verbs.channel;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportException;
import io.sluice.transport.region.DirectMemory;
import io.sluice.transport.verbs.rc.ProtectionDomain;
import io.sluice.transport.verbs.rc.RdmaNode;
import io.sluice.transport.verbs.rc.RdmaQueuePair;
import io.sluice.transport.verbs.rc.RdmaRead;
import io.sluice.transport.verbs.rc.RdmaRegion;
import io.sluice.transport.verbs.rc.ReceiveSlot;
import io.sluice.transport.verbs.rc.SendSlot;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two-sided messages over one queue pair ({@link ChannelFrames}). One registered buffer
 * holds the receive slots, all posted at {@link #start()} and each posted again as soon as its
 * frame is copied out; and the send slots: a frame is copied into a free send slot and sent,
 * or waits in order for one. Every {@value #SIGNAL_EVERY}th SEND is signaled, and the one
 * that takes the last free slot; its completion frees the slots of the SENDs before it. Each
 * slot's work request is built once and reposted with only its length changed.
 *
 * <p>Messages too large for a frame are staged: copied into registered memory, which the peer
 * READs on the same queue pair ({@link #stage}, {@link #fetch}). Staging and landing memory is
 * registered in power-of-two sizes and kept for reuse by this channel, up to {@value
 * #CACHE_BYTES} idle bytes of each kind, so only this channel's peer ever sees a staging
 * buffer again; larger messages get memory registered for the occasion.
 *
 * <p>The peer never sends more frames than this side has receives posted because both sides
 * follow the credit rules of the subclasses (at most the credit of requests unanswered, plus
 * one release each); the queue pair retries a SEND that finds no receive rather than failing.
 *
 * <p>When the queue pair fails or closes, the subclass is told ({@link #failed}); the slots and
 * every registered buffer are freed only once the queue pair is destroyed ({@link
 * RdmaQueuePair#onDestroyed}). Until then the device may still place data in them (soft-iWARP
 * keeps writing into pinned pages of a failed queue pair, deregistered or not), and memory
 * freed earlier could already belong to another buffer of the process. Thread safe; frames
 * are handled on a completion thread, in order.
 */
abstract class MessageChannel {
  private static final Logger LOG = LoggerFactory.getLogger(MessageChannel.class);
  private static final int SLOT = ChannelFrames.SLOT_BYTES;
  static final int SIGNAL_EVERY = 8;

  /** Idle registered bytes kept per kind (staging, landing); buffers up to this size are kept. */
  static final int CACHE_BYTES = 256 * 1024;
  private static final int SMALLEST_BUFFER = 8 * 1024;

  /** Registered memory of one size class. */
  private record Buffer(ByteBuffer memory, RdmaRegion region) {
    int capacity() {
      return memory.capacity();
    }

    void free() {
      region.close();
      DirectMemory.free(memory);
    }
  }

  /** Registered buffers kept for reuse by this channel. Guarded by the channel. */
  private final class BufferCache {
    private final boolean peerReadable;
    private final ArrayDeque<Buffer> idle = new ArrayDeque<>();
    private long idleBytes;

    BufferCache(boolean peerReadable) {
      this.peerReadable = peerReadable;
    }

    Buffer take(int length) throws IOException {
      int capacity = length <= CACHE_BYTES
          ? Math.max(SMALLEST_BUFFER, Integer.highestOneBit(Math.max(1, length - 1)) << 1) : length;
      synchronized (MessageChannel.this) {
        for (Iterator<Buffer> it = idle.iterator(); it.hasNext();) {
          Buffer b = it.next();
          if (b.capacity() == capacity) {
            it.remove();
            idleBytes -= capacity;
            return b;
          }
        }
      }
      ByteBuffer memory = ByteBuffer.allocateDirect(capacity);
      try {
        // In the queue pair's domain: the peer's, so only this peer can READ what is staged.
        ProtectionDomain domain = queuePair.domain();
        return new Buffer(memory, peerReadable ? domain.registerReadable(memory) : domain.registerLocal(memory));
      } catch (IOException | RuntimeException e) {
        DirectMemory.free(memory);
        throw e;
      }
    }

    /**
     * Keeps {@code b} for reuse if it fits the cache, or until the queue pair is destroyed if
     * the channel is closed (a READ may still be landing in it); frees it otherwise.
     */
    void give(Buffer b) {
      synchronized (MessageChannel.this) {
        if (closed ? !freed : idleBytes + b.capacity() <= CACHE_BYTES) {
          idle.add(b);
          idleBytes += b.capacity();
          return;
        }
      }
      b.free();
    }

    /** Frees every idle buffer. Holds the channel. */
    void clear() {
      idle.forEach(Buffer::free);
      idle.clear();
      idleBytes = 0;
    }
  }

  /** One staged message in registered memory the peer may READ; the owner closes it once. */
  final class Staging implements AutoCloseable {
    private final Buffer buffer;
    private final int length;
    private boolean released;

    private Staging(Buffer buffer, int length) {
      this.buffer = buffer;
      this.length = length;
    }

    ChannelFrames.Staged descriptor() {
      return new ChannelFrames.Staged(buffer.region().address(), buffer.region().rkey(), length);
    }

    @Override
    public void close() {
      synchronized (MessageChannel.this) {
        if (released) {
          return;
        }
        released = true;
      }
      staging.give(buffer);
    }
  }

  protected final RdmaQueuePair queuePair;
  protected final int maxMessageBytes;
  final RdmaNode node;
  /** The slots, page-aligned inside {@link #allocation} (which is what gets freed). */
  private final ByteBuffer memory;
  private final ByteBuffer allocation;
  private final RdmaRegion region;
  private final int receiveSlots;
  private final int sendSlots;
  /** Guarded by this. */
  private final ArrayDeque<Integer> freeSendSlots = new ArrayDeque<>();
  private final ArrayDeque<ByteBuffer> waitingFrames = new ArrayDeque<>();
  private int sinceSignaled;
  private boolean closed;
  /** Set once the queue pair is destroyed and this channel's memory freed. */
  private boolean freed;
  /** Prepared work requests by slot number: receives first, then sends. Set by start(). */
  private volatile ReceiveSlot[] receives;
  private volatile SendSlot[] sends;
  private final BufferCache staging = new BufferCache(true);
  private final BufferCache landing = new BufferCache(false);

  MessageChannel(RdmaNode node, RdmaQueuePair queuePair, int receiveSlots, int sendSlots, int maxMessageBytes)
      throws IOException {
    this.node = node;
    this.queuePair = queuePair;
    this.maxMessageBytes = maxMessageBytes;
    this.receiveSlots = receiveSlots;
    this.sendSlots = sendSlots;
    // Slots start on page boundaries, so no frame of at most 32 bytes crosses one: soft-iWARP
    // sends such a frame with wrong bytes when it crosses a page (see PageCrossingReads).
    this.allocation = ByteBuffer.allocateDirect((receiveSlots + sendSlots) * SLOT + SLOT - 1);
    this.memory = allocation.alignedSlice(SLOT);
    try {
      this.region = queuePair.domain().registerLocal(memory);
    } catch (IOException | RuntimeException e) {
      DirectMemory.free(allocation);
      throw e;
    }
    for (int i = 0; i < sendSlots; i++) {
      freeSendSlots.add(receiveSlots + i);
    }
    queuePair.onDestroyed(this::free);
  }

  /** Builds every slot's work request, posts every receive slot and starts watching the queue pair. */
  void start() throws IOException {
    receives = new ReceiveSlot[receiveSlots];
    for (int slot = 0; slot < receiveSlots; slot++) {
      int s = slot;
      receives[slot] = queuePair.prepareReceive(slotAddress(slot), SLOT, region.lkey(), n -> received(s, n));
    }
    sends = new SendSlot[sendSlots];
    for (int i = 0; i < sendSlots; i++) {
      sends[i] = queuePair.prepareSend(slotAddress(receiveSlots + i), SLOT, region.lkey());
    }
    queuePair.onFailure(this::queuePairFailed);
    for (ReceiveSlot r : receives) {
      queuePair.receive(r);
    }
  }

  private long slotAddress(int slot) {
    return region.address() + (long) slot * SLOT;
  }

  /** True until the queue pair fails or closes. */
  public boolean isOpen() {
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

  /** Copies {@code message}'s remaining bytes into registered memory the peer may READ. */
  final Staging stage(ByteBuffer message) throws IOException {
    int length = message.remaining();
    Buffer b = staging.take(length);
    b.memory().duplicate().clear().put(message.duplicate());
    return new Staging(b, length);
  }

  /** READs a staged message of the peer into a new heap buffer. */
  final CompletableFuture<ByteBuffer> fetch(ChannelFrames.Staged staged) {
    Buffer target;
    try {
      target = landing.take(staged.length());
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    RdmaRegion r = target.region();
    RdmaRead read = new RdmaRead(staged.address(), staged.rkey(), r.address(), r.lkey(), staged.length());
    return queuePair.readBatch(List.of(read)).get(0).handle((x, e) -> {
      try {
        if (e != null) {
          throw new CompletionException(e);
        }
        return ByteBuffer.allocate(staged.length()).put(target.memory().duplicate().clear().limit(staged.length())).flip();
      } finally {
        // The queue pair disconnected before a failed READ completed: nothing lands here later.
        landing.give(target);
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
    failed(cause);
  }

  /** The queue pair is destroyed: the device touches none of the slots and buffers any more. */
  private synchronized void free() {
    closed = true;
    freed = true;
    staging.clear();
    landing.clear();
    region.close();
    DirectMemory.free(allocation);
  }

  /** Closes the channel and its queue pair; outstanding work fails through {@link #failed}. */
  public void close() {
    queuePair.close();
  }
}
