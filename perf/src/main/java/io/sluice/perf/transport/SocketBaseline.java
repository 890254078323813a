package io.sluice.perf.transport;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * The plain-socket baseline's client: one blocking {@link SocketChannel} to a {@link
 * StreamServer}, read into direct buffers exactly as large as the READ blocks it is compared
 * with. Not thread safe: one caller at a time.
 */
final class SocketBaseline implements AutoCloseable {
  /** Bytes asked for per request while streaming; large enough that the request costs nothing. */
  private static final long ROUND_BYTES = 32L << 20;

  private final InetSocketAddress server;
  private final SocketChannel channel;
  private final ByteBuffer request = ByteBuffer.allocate(StreamServer.REQUEST_LENGTH);

  SocketBaseline(InetSocketAddress server) throws IOException {
    this.server = server;
    this.channel = SocketChannel.open(server);
    channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
  }

  /** Streams for {@code warmup}, then measures for {@code measure}; returns GB/s (10^9 bytes). */
  double streamGigabytesPerSecond(int block, Duration warmup, Duration measure) throws IOException {
    ByteBuffer sink = ByteBuffer.allocateDirect(block);
    long round = Math.max(block, ROUND_BYTES / block * block);
    stream(sink, round, warmup.toNanos());
    long start = System.nanoTime();
    long bytes = stream(sink, round, measure.toNanos());
    return bytes / (double) (System.nanoTime() - start);
  }

  /** Requests rounds of {@code round} bytes until {@code nanos} have passed; returns bytes read. */
  private long stream(ByteBuffer sink, long round, long nanos) throws IOException {
    long deadline = System.nanoTime() + nanos;
    long total = 0;
    do {
      ask(round, sink.capacity());
      for (long left = round; left > 0; left -= sink.capacity()) {
        sink.clear();
        fill(sink);
      }
      total += round;
    } while (System.nanoTime() < deadline);
    return total;
  }

  /**
   * Request/response round trips of {@code size} bytes: a {@link StreamServer#REQUEST_LENGTH}-byte
   * request, then {@code size} bytes back. Adds the nanoseconds of each trip to {@code samples}
   * until {@code measure} has passed or the samples are full.
   */
  void pingPong(int size, Duration warmup, Duration measure, LatencySamples samples) throws IOException {
    ByteBuffer sink = ByteBuffer.allocateDirect(size);
    long warmEnd = System.nanoTime() + warmup.toNanos();
    while (System.nanoTime() < warmEnd) {
      trip(sink);
    }
    long deadline = System.nanoTime() + measure.toNanos();
    while (System.nanoTime() < deadline && !samples.isFull()) {
      long t0 = System.nanoTime();
      trip(sink);
      samples.add(System.nanoTime() - t0);
    }
  }

  /**
   * New connections, each a TCP connect and one 1-byte round trip through the server (so it has
   * accepted and served it), then closed: the floor under a transport's connect. Adds the
   * nanoseconds of each to {@code samples} until {@code measure} has passed or the samples are full.
   */
  void connectLatency(Duration warmup, Duration measure, LatencySamples samples) throws IOException {
    ByteBuffer one = ByteBuffer.allocateDirect(1);
    ByteBuffer ask = ByteBuffer.allocate(StreamServer.REQUEST_LENGTH);
    long warmEnd = System.nanoTime() + warmup.toNanos();
    while (System.nanoTime() < warmEnd) {
      connectOnce(one, ask);
    }
    long deadline = System.nanoTime() + measure.toNanos();
    while (System.nanoTime() < deadline && !samples.isFull()) {
      long t0 = System.nanoTime();
      connectOnce(one, ask);
      samples.add(System.nanoTime() - t0);
    }
  }

  private void connectOnce(ByteBuffer one, ByteBuffer ask) throws IOException {
    try (SocketChannel c = SocketChannel.open(server)) {
      c.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ask.clear();
      StreamServer.encodeRequest(ask, 1, 1);
      ask.flip();
      while (ask.hasRemaining()) {
        c.write(ask);
      }
      one.clear();
      while (one.hasRemaining()) {
        if (c.read(one) < 0) {
          throw new EOFException("stream server closed the connection");
        }
      }
    }
  }

  private void trip(ByteBuffer sink) throws IOException {
    ask(sink.capacity(), sink.capacity());
    sink.clear();
    fill(sink);
  }

  private void ask(long bytes, int chunk) throws IOException {
    request.clear();
    StreamServer.encodeRequest(request, bytes, chunk);
    request.flip();
    while (request.hasRemaining()) {
      channel.write(request);
    }
  }

  private void fill(ByteBuffer sink) throws IOException {
    while (sink.hasRemaining()) {
      if (channel.read(sink) < 0) {
        throw new EOFException("stream server closed the connection");
      }
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
