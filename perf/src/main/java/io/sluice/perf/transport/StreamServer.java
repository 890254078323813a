package io.sluice.perf.transport;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The plain-socket baseline's server: a blocking {@link ServerSocketChannel} with one thread per
 * connection. It defines the baseline's whole protocol: the client sends a {@link
 * #REQUEST_LENGTH}-byte request (big-endian i64 byte count, i32 chunk size) and the server
 * answers with exactly that many bytes, written in chunks of that size straight from a direct
 * buffer that it cycles over. A stream is one large request; a ping-pong is many small ones.
 *
 * <p>Thread safe; {@link #close()} stops the acceptor and every connection.
 */
final class StreamServer implements AutoCloseable {
  static final int REQUEST_LENGTH = 12;

  private final ServerSocketChannel listener;
  private final ByteBuffer source;
  private final Thread acceptor;
  private final List<SocketChannel> connections = new ArrayList<>();

  /** Listens on an ephemeral port of {@code host}, serving bytes of {@code source}. */
  StreamServer(String host, ByteBuffer source) throws IOException {
    this.source = source.duplicate().clear();
    this.listener = ServerSocketChannel.open().bind(new InetSocketAddress(host, 0));
    this.acceptor = new Thread(this::acceptLoop, "stream-server-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  InetSocketAddress address() throws IOException {
    return (InetSocketAddress) listener.getLocalAddress();
  }

  /** Writes the request for {@code byteCount} bytes in chunks of {@code chunk} into {@code out}. */
  static void encodeRequest(ByteBuffer out, long byteCount, int chunk) {
    out.putLong(byteCount).putInt(chunk);
  }

  private void acceptLoop() {
    while (listener.isOpen()) {
      try {
        SocketChannel ch = listener.accept();
        synchronized (connections) {
          connections.add(ch);
        }
        Thread t = new Thread(() -> serve(ch), "stream-server-conn");
        t.setDaemon(true);
        t.start();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        System.err.println("stream server: accept failed: " + e);
        return;
      }
    }
  }

  private void serve(SocketChannel ch) {
    try (ch) {
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ByteBuffer request = ByteBuffer.allocate(REQUEST_LENGTH);
      ByteBuffer view = source.duplicate();
      int cursor = 0;
      while (true) {
        request.clear();
        if (!readFully(ch, request)) {
          return;
        }
        long count = request.getLong(0);
        int chunk = request.getInt(8);
        if (count < 0 || chunk <= 0 || chunk > source.capacity()) {
          throw new IOException("bad request: " + count + " bytes in chunks of " + chunk);
        }
        while (count > 0) {
          int n = (int) Math.min(chunk, count);
          if (cursor + n > source.capacity()) {
            cursor = 0;
          }
          view.limit(cursor + n).position(cursor);
          while (view.hasRemaining()) {
            ch.write(view);
          }
          cursor += n;
          count -= n;
        }
      }
    } catch (IOException e) {
      if (listener.isOpen()) {
        System.err.println("stream server: connection ended: " + e);
      }
    } finally {
      synchronized (connections) {
        connections.remove(ch);
      }
    }
  }

  /** Reads until {@code buf} is full; false on a clean end of stream before the first byte. */
  static boolean readFully(SocketChannel ch, ByteBuffer buf) throws IOException {
    boolean any = false;
    while (buf.hasRemaining()) {
      if (ch.read(buf) < 0) {
        if (!any) {
          return false;
        }
        throw new EOFException("stream ended inside a message");
      }
      any = true;
    }
    return true;
  }

  @Override
  public void close() throws IOException {
    listener.close();
    List<SocketChannel> open;
    synchronized (connections) {
      open = new ArrayList<>(connections);
    }
    for (SocketChannel ch : open) {
      ch.close();
    }
  }
}
