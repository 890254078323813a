package io.sluice.transport.carrier;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The non-blocking frame I/O of one connection, accepted or (after its handshake) made, driven
 * by an {@link IoLoop}: it assembles incoming frames (header and tag, then payload; small frames
 * arrive several to a read, a READ's bytes go straight into their destination) and hands each
 * whole to its {@link Receiver}, and queues outgoing frames, writing each batch with one gather
 * write as far as the socket takes it and the rest when the socket is writable again. On the
 * serving side nothing more is read while anything waits to be written, so a peer that does not
 * read its answers cannot make this side buffer more than one of them. After {@link #protect},
 * frames are sealed and opened by {@link RecordLayer}.
 *
 * <p>Threads: reading happens on the loop thread, {@link #protect} there or before the socket
 * is registered; {@link #send}, {@link #resumeReading}, {@link #checkStalled} and {@link #close}
 * from any thread, under one lock.
 */
final class SessionSocket {
  /** What the connection's protocol does with the frames. Called on the loop thread. */
  interface Receiver {
    /**
     * The largest payload this frame may announce now (its type, correlation id and the
     * connection's state decide); checked before its tag is read and before anything is
     * allocated for it.
     *
     * @throws io.sluice.transport.ProtocolException if no payload of any length is acceptable
     */
    long maxPayload(FrameHeader h) throws io.sluice.transport.ProtocolException;

    /** A header arrived; false pauses reading until {@link #resumeReading} (before its payload). */
    boolean admit(FrameHeader h) throws IOException;

    /**
     * Whether the pause {@link #admit} just asked for waits for something other peers hold (its
     * turn for memory they share), rather than for what this peer's own requests hold: such a
     * pause is not this peer stalling, and {@link #checkStalled} does not count it.
     */
    default boolean waitsItsTurn() {
      return false;
    }

    /**
     * Where the payload of an admitted frame goes: null for a new heap buffer; a buffer with
     * exactly the payload's length remaining (a READ's destination: encrypted, plain text lands
     * there only after its check; in mac mode the bytes land, then are checked; either way what
     * landed is zeroed if the frame fails its check or the connection closes before it is whole);
     * or {@link #DISCARD} to read, check and drop it (READ_RESPONSE only).
     */
    default ByteBuffer sink(FrameHeader h) throws IOException {
      return null;
    }

    /**
     * A whole frame: its plain payload, checked when the connection is protected (for a sink,
     * the range of the sink it filled). Not called for a discarded frame.
     */
    void frame(FrameHeader h, ByteBuffer payload) throws IOException;

    /** The peer broke the protocol; the connection closes right after this returns. */
    void violated(io.sluice.transport.ProtocolException e);

    /** The connection closed: {@code cause} is why (a protocol violation, the peer, a local close). Once. */
    void closed(IOException cause);
  }

  /**
   * Queued frames and what to do once they are written (or dropped): as buffers ready to write,
   * or, on an encrypted connection, as frames sealed into {@link #sealed} when they reach the head
   * of the queue, whose {@code done} runs once they are sealed (their bytes are copied then).
   */
  private static final class Outgoing {
    final ByteBuffer[] buffers;
    final List<Frame> frames;
    final Runnable done;
    int nextFrame;

    Outgoing(ByteBuffer[] buffers, List<Frame> frames, Runnable done) {
      this.buffers = buffers;
      this.frames = frames;
      this.done = done;
    }

    boolean written() {
      return !buffers[buffers.length - 1].hasRemaining();
    }
  }

  /** What {@link Receiver#sink} returns for a payload nobody waits for any more. */
  static final ByteBuffer DISCARD = ByteBuffer.allocate(0);

  /** Frames handled per turn, so one busy peer cannot starve the loop's others. */
  private static final int FRAMES_PER_TURN = 16;
  /** Read-ahead per connection: a few control frames. Larger payloads are read in place. */
  private static final int READ_AHEAD = 1024;
  /** Records an encrypted connection seals ahead of the socket: what one write may take. */
  private static final int SEALED_RECORDS = 4;
  /** The sealing buffers of encrypted connections, taken while they write and returned when idle. */
  private static final SealBuffers SEAL_BUFFERS =
      new SealBuffers(SEALED_RECORDS * (RecordLayer.RECORD_LENGTH + RecordLayer.SEAL_SLACK), 64);

  private final SocketChannel channel;
  private final IoLoop loop;
  private final long ioTimeoutNanos;
  private final Receiver receiver;
  /** Bytes read and not yet taken by a frame; kept in write mode (position = end of data). */
  private final ByteBuffer in = ByteBuffer.allocate(READ_AHEAD);
  private final Runnable readTask = this::readOnLoop;
  private final PayloadReader payload = new PayloadReader();
  private final boolean readWhileWriting;
  private RecordLayer.Opener opener;
  private volatile long readSince;

  private final ReentrantLock lock = new ReentrantLock();
  private final ArrayDeque<Outgoing> outbound = new ArrayDeque<>();
  private SelectionKey key;
  private RecordLayer.Sealer sealer;
  /** Whether frames are sealed (encrypted connections) one record at a time into {@link #sealed}. */
  private boolean sealsRecords;
  /**
   * Encrypted connections: sealed bytes not yet written (read mode), and the frame being sealed.
   * The buffer is taken from {@link #SEAL_BUFFERS} when there is something to seal and given back
   * once everything queued is written, so an idle connection holds none.
   */
  private ByteBuffer sealed;
  private RecordLayer.FrameSeal sealing;
  private boolean readPaused;
  /** Reading stopped for a backlog or a pause with frames possibly read ahead; resume runs it. */
  private boolean readWaiting;
  private long pausedSince;
  /** Whether the pause counts against the peer's deadline: not when it waits its turn ({@link Receiver#waitsItsTurn}). */
  private boolean pauseIsPeers;
  /**
   * Calls of {@link #resumeReading}, so that a resume that came between a receiver's "no" and the
   * pause it causes is not lost (the pause then does not happen).
   */
  private volatile long resumes; // written under the lock
  private long lastWriteProgress = System.nanoTime();
  /** When the last whole frame arrived (or the socket was made): with writes, how long it has been quiet. */
  private volatile long lastFrameRead = System.nanoTime();
  private boolean closed;

  /**
   * @param readWhileWriting false on the serving side (a peer that does not read its answers
   *     gets no more served); true on the connecting side, which must always take the answers
   */
  SessionSocket(SocketChannel channel, IoLoop loop, long ioTimeoutNanos, boolean readWhileWriting,
      Receiver receiver) {
    this.readWhileWriting = readWhileWriting;
    this.channel = channel;
    this.loop = loop;
    this.ioTimeoutNanos = ioTimeoutNanos;
    this.receiver = receiver;
  }

  void registered(SelectionKey k) {
    lock.lock();
    try {
      key = k;
      if (closed) {
        k.cancel();
      } else {
        updateInterest();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Seals every frame sent from now on and checks every frame read from now on. */
  void protect(RecordLayer.Sealer s, RecordLayer.Opener o) {
    opener = o;
    lock.lock();
    try {
      sealer = s;
      sealsRecords = s.encrypted();
    } finally {
      lock.unlock();
    }
  }

  void onReady(SelectionKey k) {
    try {
      if (k.isValid() && k.isWritable()) {
        lock.lock();
        try {
          flushLocked();
        } finally {
          lock.unlock();
        }
      }
      if (k.isValid() && k.isReadable()) {
        readFrames();
      }
    } catch (IOException e) {
      failed(e);
    } catch (RuntimeException | Error e) {
      brokeDown(e);
    }
  }

  private void readOnLoop() {
    try {
      readFrames();
    } catch (IOException e) {
      failed(e);
    } catch (RuntimeException | Error e) {
      brokeDown(e);
    }
  }

  /**
   * Serving this connection threw something no protocol check expected (an {@link Error}
   * included, such as running out of memory): this connection closes, saying why, and the loop
   * thread goes on serving the others.
   */
  void brokeDown(Throwable t) {
    close(new PeerClosedException("connection closed: serving it failed with " + t, t));
  }

  private void failed(IOException e) {
    if (e instanceof io.sluice.transport.ProtocolException pe) {
      receiver.violated(pe);
    }
    close(e);
  }

  /** May the loop go on reading? If not, a later resume or drained backlog runs the read task. */
  private boolean mayRead() {
    lock.lock();
    try {
      if (closed) {
        return false;
      }
      if (readPaused || (!readWhileWriting && writing())) {
        readWaiting = true;
        return false;
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  private void readFrames() throws IOException {
    boolean socketEmpty = false;
    for (int n = 0; n < FRAMES_PER_TURN; n++) {
      if (!mayRead()) {
        return;
      }
      if (!payload.inProgress()) {
        int need = FrameHeader.LENGTH + (opener != null ? RecordLayer.TAG_LENGTH : 0);
        if (in.position() < need && !socketEmpty) {
          socketEmpty = fill();
        }
        if (in.position() < FrameHeader.LENGTH) {
          markPartial(in.position() > 0);
          return;
        }
        FrameHeader h = FrameHeader.decode(in.duplicate().flip(), Integer.MAX_VALUE); // fails before the tag
        long max = receiver.maxPayload(h);
        if (h.payloadLength() > max) {
          throw new io.sluice.transport.ProtocolException(
              h.type() + " payload of " + h.payloadLength() + " bytes exceeds " + max);
        }
        if (in.position() < need) {
          markPartial(true);
          return;
        }
        long resumesBefore = resumesSoFar();
        if (!receiver.admit(h)) {
          if (pauseReading(resumesBefore)) {
            return;
          }
          continue; // resumed meanwhile: ask again
        }
        in.flip().position(FrameHeader.LENGTH);
        ByteBuffer frameTag = in.slice(FrameHeader.LENGTH, need - FrameHeader.LENGTH);
        in.position(need);
        payload.start(h, frameTag, receiver.sink(h), opener, in);
        in.compact();
      }
      if (!payload.readFrom(this::readInto, socketEmpty)) {
        markPartial(true);
        return;
      }
      markPartial(false);
      lastFrameRead = System.nanoTime();
      payload.deliver(receiver);
    }
    if (in.position() > 0) {
      loop.execute(readTask); // frames read ahead that no readiness event will announce
    }
  }

  /** Reads what the socket has into the read-ahead. @return true if that emptied the socket */
  private boolean fill() throws IOException {
    if (readInto(in) < 0) {
      throw new PeerClosedException(in.position() > 0 ? "peer closed the connection mid-frame"
          : "peer closed the connection");
    }
    return in.hasRemaining();
  }

  /** Reads from the socket into the buffers in order; a lost connection is a {@link PeerClosedException}. */
  private long readInto(ByteBuffer... dsts) throws IOException {
    try {
      return dsts.length == 1 ? channel.read(dsts[0]) : channel.read(dsts);
    } catch (IOException e) {
      throw new PeerClosedException("connection lost: " + e.getMessage(), e);
    }
  }

  private void markPartial(boolean midFrame) {
    if (!midFrame) {
      readSince = 0;
    } else if (readSince == 0) {
      readSince = System.nanoTime();
    }
  }

  private long resumesSoFar() {
    return resumes;
  }

  /** Pauses reading unless a resume came after {@code resumesBefore}; returns whether it paused. */
  private boolean pauseReading(long resumesBefore) {
    lock.lock();
    try {
      if (resumes != resumesBefore) {
        return false;
      }
      readPaused = true;
      readWaiting = true;
      pausedSince = System.nanoTime();
      pauseIsPeers = !receiver.waitsItsTurn();
      // The peer delivered this header; what follows it is not overdue while this side does not
      // read. Reading again restarts the clock of a frame still incomplete then.
      readSince = 0;
      updateInterest();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Reading goes on after a {@link Receiver#admit} said no; from any thread. */
  void resumeReading() {
    lock.lock();
    try {
      resumes++;
      if (readPaused) {
        readPaused = false;
        updateInterest();
        resumeLocked();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Runs the read task once reading is possible again and a turn ended waiting for that. */
  private void resumeLocked() {
    if (readWaiting && !readPaused && !writing() && !closed) {
      readWaiting = false;
      loop.execute(readTask);
    }
  }

  /**
   * Queues one frame (sealed if protected) and writes as much as the socket takes now. {@code
   * done} runs once the frame is written or dropped because the connection closed; ownership of
   * whatever it releases passes here.
   */
  void send(FrameType type, long corr, Runnable done, ByteBuffer... payload) {
    enqueue(List.of(new Frame(type, corr, payload)), done);
  }

  /** One frame to send with {@link #sendAll}. */
  record Frame(FrameType type, long correlationId, ByteBuffer... payload) {}

  /** Queues frames to go out together in one gather write (a batch of READ requests). */
  void sendAll(List<Frame> frames) {
    enqueue(frames, () -> { });
  }

  private void enqueue(List<Frame> frames, Runnable done) {
    IOException failure = null;
    lock.lock();
    try {
      if (closed) {
        done.run();
        return;
      }
      boolean idle = !writing();
      if (sealsRecords) {
        outbound.add(new Outgoing(null, frames, done));
      } else {
        List<ByteBuffer> buffers = new ArrayList<>(frames.size() * 3);
        for (Frame f : frames) {
          Collections.addAll(buffers, seal(f.type(), f.correlationId(), f.payload()));
        }
        outbound.add(new Outgoing(buffers.toArray(ByteBuffer[]::new), null, done));
      }
      if (idle) {
        lastWriteProgress = System.nanoTime();
        flushLocked();
      }
    } catch (IOException e) {
      failure = e;
    } finally {
      lock.unlock();
    }
    if (failure != null) {
      close(failure);
    }
  }

  private ByteBuffer[] seal(FrameType type, long corr, ByteBuffer... payload) {
    if (sealer != null) {
      return sealer.seal(type, corr, payload);
    }
    int length = 0;
    for (ByteBuffer b : payload) {
      length += b.remaining();
    }
    ByteBuffer[] buffers = new ByteBuffer[payload.length + 1];
    buffers[0] = new FrameHeader(type, length, corr).toBuffer();
    System.arraycopy(payload, 0, buffers, 1, payload.length);
    return buffers;
  }

  /** Whether anything waits to be written: queued frames or sealed bytes. Under the lock. */
  private boolean writing() {
    return !outbound.isEmpty() || (sealed != null && sealed.hasRemaining());
  }

  /**
   * Writes what is queued as far as the socket takes it: sealed bytes first, then the head of
   * the queue (frames queued before the connection was protected go as they are; later frames of
   * an encrypted connection are sealed a few records at a time, as the socket drains).
   */
  private void flushLocked() throws IOException {
    while (true) {
      if (sealed != null && sealed.hasRemaining()) {
        write(sealed);
        if (sealed.hasRemaining()) {
          break;
        }
        continue;
      }
      Outgoing head = outbound.peek();
      if (head == null) {
        break;
      }
      if (head.buffers != null) {
        write(head.buffers);
        if (!head.written()) {
          break;
        }
        outbound.poll();
        head.done.run();
      } else if (!sealMoreLocked()) {
        break;
      }
    }
    if (sealed != null && !sealed.hasRemaining() && outbound.isEmpty()) {
      SEAL_BUFFERS.give(sealed);
      sealed = null;
    }
    updateInterest();
    resumeLocked();
  }

  /**
   * Seals frames from the head of the queue into the emptied buffer as far as it has room.
   *
   * @return whether it sealed any bytes
   */
  private boolean sealMoreLocked() {
    if (sealed == null) {
      sealed = SEAL_BUFFERS.take();
    }
    sealed.clear();
    Outgoing head;
    while ((head = outbound.peek()) != null && head.frames != null) {
      if (sealing == null) {
        Frame f = head.frames.get(head.nextFrame);
        sealing = sealer.start(f.type(), f.correlationId(), f.payload());
      }
      if (!sealing.sealInto(sealed)) {
        break;
      }
      sealing = null;
      if (++head.nextFrame == head.frames.size()) {
        outbound.poll();
        head.done.run();
      }
    }
    sealed.flip();
    return sealed.hasRemaining();
  }

  private void write(ByteBuffer... buffers) throws IOException {
    long n;
    try {
      n = channel.write(buffers);
    } catch (IOException e) {
      throw new PeerClosedException("connection lost: " + e.getMessage(), e);
    }
    if (n > 0) {
      lastWriteProgress = System.nanoTime();
    }
  }

  private void updateInterest() {
    if (key == null || !key.isValid()) {
      return;
    }
    int ops = !writing() ? (readPaused ? 0 : SelectionKey.OP_READ) : SelectionKey.OP_WRITE;
    if (key.interestOps() != ops) {
      key.interestOps(ops);
      loop.wakeup();
    }
  }

  /**
   * Called by the transport's timer: closes the connection when a frame has been half read, a
   * write has made no progress, or reading has been paused for what the peer's own requests hold
   * (not while it waits its turn for memory others hold), for longer than the I/O timeout. A wait
   * for what other peers hold is not this peer's doing and never counts.
   *
   * @return true if it closed the connection
   */
  boolean checkStalled(long now) {
    long r = readSince;
    boolean stalled;
    lock.lock();
    try {
      stalled = !closed && ((r != 0 && now - r > ioTimeoutNanos)
          || (writing() && now - lastWriteProgress > ioTimeoutNanos)
          || (readPaused && pauseIsPeers && now - pausedSince > ioTimeoutNanos));
    } finally {
      lock.unlock();
    }
    if (stalled) {
      close(new io.sluice.transport.TransportTimeoutException("socket I/O stalled past the deadline"));
    }
    return stalled;
  }

  /**
   * How long, at {@code now}, the socket has carried nothing: no whole frame read, no write
   * progress, nothing waiting to be written, no frame half read. 0 while any of those is going on.
   */
  long quietFor(long now) {
    lock.lock();
    try {
      if (closed || writing() || readSince != 0) {
        return 0;
      }
      return Math.max(0, now - Math.max(lastFrameRead, lastWriteProgress));
    } finally {
      lock.unlock();
    }
  }

  /** Whether this socket holds a sealing buffer now (it does only while it has frames to write). */
  boolean holdsSealBuffer() {
    lock.lock();
    try {
      return sealed != null;
    } finally {
      lock.unlock();
    }
  }

  boolean isOpen() {
    lock.lock();
    try {
      return !closed;
    } finally {
      lock.unlock();
    }
  }

  /** Closes the socket and runs the completion of every frame still queued. From any thread. */
  void close() {
    close(new PeerClosedException("connection closed locally"));
  }

  /** Closes with {@code cause}; the receiver hears of it once, outside the lock. */
  void close(IOException cause) {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      try {
        channel.close();
      } catch (IOException ignored) {
        // the socket is unusable either way
      }
      Outgoing o;
      while ((o = outbound.poll()) != null) {
        o.done.run();
      }
      sealing = null;
      if (sealed != null) {
        SEAL_BUFFERS.give(sealed);
        sealed = null;
      }
    } finally {
      lock.unlock();
    }
    loop.forget(this);
    loop.wakeup();
    // A frame half received may hold native memory in its check; only the loop thread reads, so
    // it lets go of that there, after its last read of this socket.
    if (loop.inLoop()) {
      payload.abandon();
    } else {
      loop.execute(payload::abandon);
    }
    receiver.closed(cause);
  }
}
