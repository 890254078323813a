package io.sluice.transport.carrier;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.TransportTimeoutException;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RecordLayer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The connecting side's blocking socket during the handshake: frame-level reads and writes,
 * record protection once {@link #protect} is called (see {@link RecordLayer}), and deadlines:
 * any write, and any read that has begun receiving a frame, that makes no progress for the I/O
 * timeout is ended by the transport's timer, which closes the socket ({@link #checkStalled}).
 * After the handshake the socket and its protection pass to a {@link SessionSocket}. One thread
 * reads; any thread may write, one at a time (frames are sealed under the write lock, so
 * sequence numbers follow wire order).
 */
final class FrameChannel implements AutoCloseable {
  private final SocketChannel socket;
  private final long ioTimeoutNanos;
  private final ReentrantLock writeLock = new ReentrantLock();
  private volatile long writeSince;
  private volatile long readSince;
  private volatile boolean stalled;
  /** Guarded by {@link #writeLock}; null until the handshake ends. */
  private RecordLayer.Sealer sealer;
  /** Used by the one reading thread only; null until the handshake ends. */
  private RecordLayer.Opener opener;
  /** The tag of the frame whose header was read last; reading thread only. */
  private final ByteBuffer tag = ByteBuffer.allocate(RecordLayer.TAG_LENGTH);

  FrameChannel(SocketChannel socket, long ioTimeoutNanos) {
    this.socket = socket;
    this.ioTimeoutNanos = ioTimeoutNanos;
  }

  SocketChannel socket() {
    return socket;
  }

  /**
   * Turns on record protection: every frame written from now on is sealed, every frame read is
   * checked. Called by the reading thread once the handshake succeeded, before any later frame.
   */
  void protect(RecordLayer.Sealer sealer, RecordLayer.Opener opener) throws IOException {
    lockForWrite();
    try {
      this.sealer = sealer;
      this.opener = opener;
    } finally {
      writeLock.unlock();
    }
  }

  /** The sealer the handshake set up, for the connection that takes over the socket. */
  RecordLayer.Sealer sealer() throws IOException {
    lockForWrite();
    try {
      return sealer;
    } finally {
      writeLock.unlock();
    }
  }

  /** The opener the handshake set up; reading thread only. */
  RecordLayer.Opener opener() {
    return opener;
  }

  /**
   * Reads the tag of a frame whose header was read before {@link #protect} (AUTH_OK): the first
   * protected frame.
   */
  void readTag() throws IOException {
    tag.clear();
    readFully(tag);
    tag.flip();
  }

  /** Reads a frame's payload and returns it plain (checked and decrypted once protected). */
  ByteBuffer readBody(FrameHeader h) throws IOException {
    RecordLayer.Opener o = opener;
    ByteBuffer payload = readPayload(h.payloadLength());
    return o == null ? payload : o.open(h, tag, payload);
  }

  /**
   * Reads the next header (and, once protected, the tag after it, in the same read), waiting as
   * long as it takes for its first byte.
   *
   * @param scratch at least {@link FrameHeader#LENGTH} + {@link RecordLayer#TAG_LENGTH} bytes
   */
  FrameHeader readHeader(ByteBuffer scratch, long maxPayload) throws IOException {
    return readHeader(scratch, type -> maxPayload);
  }

  /** As {@link #readHeader(ByteBuffer, long)}, with the payload limit depending on the frame type. */
  FrameHeader readHeader(ByteBuffer scratch, java.util.function.ToLongFunction<FrameType> maxPayload)
      throws IOException {
    int length = FrameHeader.LENGTH + (opener != null ? RecordLayer.TAG_LENGTH : 0);
    scratch.clear().limit(length);
    FrameHeader h = null;
    try {
      while (scratch.hasRemaining()) {
        if (read(scratch) < 0) {
          throw new PeerClosedException("peer closed the connection");
        }
        if (h == null && scratch.position() >= FrameHeader.LENGTH) {
          h = FrameHeader.decode(scratch.duplicate().flip(), Integer.MAX_VALUE); // fails before the tag
          long max = maxPayload.applyAsLong(h.type());
          if (h.payloadLength() > max) {
            throw new ProtocolException(h.type() + " payload of " + h.payloadLength() + " bytes exceeds " + max);
          }
        }
        if (scratch.position() > 0 && readSince == 0 && scratch.hasRemaining()) {
          readSince = System.nanoTime();
        }
      }
    } finally {
      readSince = 0;
    }
    scratch.flip().position(FrameHeader.LENGTH);
    tag.clear();
    tag.put(scratch).flip();
    return h;
  }

  /** Fills {@code dst} completely, within the I/O deadline. */
  private void readFully(ByteBuffer dst) throws IOException {
    readSince = System.nanoTime();
    try {
      while (dst.hasRemaining()) {
        if (read(dst) < 0) {
          throw new PeerClosedException("peer closed the connection mid-frame");
        }
      }
    } finally {
      readSince = 0;
    }
  }

  /** Reads and discards {@code n} bytes. */
  private void skip(long n, ByteBuffer scratch) throws IOException {
    while (n > 0) {
      scratch.clear().limit((int) Math.min(scratch.capacity(), n));
      readFully(scratch);
      n -= scratch.limit();
    }
  }

  /** Reads {@code length} bytes into a new buffer. */
  private ByteBuffer readPayload(int length) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(length);
    readFully(b);
    return b.flip();
  }

  private int read(ByteBuffer dst) throws IOException {
    try {
      return socket.read(dst);
    } catch (IOException e) {
      throw translate(e);
    }
  }

  private void lockForWrite() throws IOException {
    boolean locked;
    try {
      locked = writeLock.tryLock(ioTimeoutNanos, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PeerClosedException("interrupted while waiting to write");
    }
    if (!locked) {
      throw new TransportTimeoutException("socket write blocked for longer than the I/O timeout");
    }
  }

  /** Writes one frame, sealed once protected. */
  void writeFrame(FrameType type, long correlationId, ByteBuffer... payload) throws IOException {
    lockForWrite();
    try {
      writeLocked(frame(type, correlationId, payload));
    } finally {
      writeLock.unlock();
    }
  }

  private ByteBuffer[] frame(FrameType type, long correlationId, ByteBuffer... payload) {
    if (sealer != null) {
      return sealer.seal(type, correlationId, payload);
    }
    int length = 0;
    for (ByteBuffer b : payload) {
      length += b.remaining();
    }
    ByteBuffer[] all = new ByteBuffer[payload.length + 1];
    all[0] = new FrameHeader(type, length, correlationId).toBuffer();
    System.arraycopy(payload, 0, all, 1, payload.length);
    return all;
  }

  /** Writes all buffers as one gather write; the caller holds the write lock. */
  private void writeLocked(ByteBuffer... buffers) throws IOException {
    try {
      writeSince = System.nanoTime();
      long remaining = 0;
      for (ByteBuffer b : buffers) {
        remaining += b.remaining();
      }
      while (remaining > 0) {
        long n = socket.write(buffers);
        remaining -= n;
      }
    } catch (IOException e) {
      throw translate(e);
    } finally {
      writeSince = 0;
    }
  }

  /** Called by the timer: closes the socket if a read or write has stalled past the deadline. */
  boolean checkStalled(long now) {
    long w = writeSince;
    long r = readSince;
    if ((w != 0 && now - w > ioTimeoutNanos) || (r != 0 && now - r > ioTimeoutNanos)) {
      stalled = true;
      close();
      return true;
    }
    return false;
  }

  private IOException translate(IOException e) {
    if (stalled) {
      return new TransportTimeoutException("socket I/O stalled past the deadline", e);
    }
    if (e instanceof PeerClosedException || e instanceof ProtocolException) {
      return e;
    }
    return new PeerClosedException("connection lost: " + e.getMessage(), e);
  }

  boolean isOpen() {
    return socket.isOpen();
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing is best effort; the socket is unusable either way
    }
  }
}
