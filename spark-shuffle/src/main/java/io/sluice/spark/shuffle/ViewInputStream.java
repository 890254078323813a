package io.sluice.spark.shuffle;

import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.function.Function;

/**
 * An InputStream over a range of a {@link RemoteView}, read with the view's positional reads
 * ({@link RemoteView#read}), never through its mapping: a peer file shortened under the stream
 * fails a read with what {@code failure} makes of the transport's exception (a reduce task's fetch
 * failure), where the mapping would fault in the JVM. Reads of at least a chunk go straight into
 * the caller's array; smaller ones are served from a chunk read ahead. It does not own the view:
 * whoever does keeps it open until the stream has been read. Not thread safe.
 */
public final class ViewInputStream extends InputStream {
  /** Bytes read ahead for small reads. */
  static final int CHUNK = 64 << 10;

  private final RemoteView view;
  private final long end;
  private final Function<TransportException, RuntimeException> failure;
  /** Where the next byte not yet in {@link #ahead} lies in the view. */
  private long next;
  /** Bytes read ahead and not yet consumed (position to limit); null until the first small read. */
  private ByteBuffer ahead;

  /**
   * @param failure what a failed read of the view throws (it is given the transport's exception)
   */
  public ViewInputStream(RemoteView view, long offset, long length,
      Function<TransportException, RuntimeException> failure) {
    this.view = view;
    this.next = offset;
    this.end = offset + length;
    this.failure = failure;
  }

  @Override
  public int read() {
    if (!fill()) {
      return -1;
    }
    return ahead.get() & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (len == 0) {
      return 0;
    }
    if (ahead != null && ahead.hasRemaining()) {
      int n = Math.min(len, ahead.remaining());
      ahead.get(b, off, n);
      return n;
    }
    if (next == end) {
      return -1;
    }
    if (len < CHUNK) {
      fill();
      int n = Math.min(len, ahead.remaining());
      ahead.get(b, off, n);
      return n;
    }
    int n = (int) Math.min(len, end - next);
    readView(ByteBuffer.wrap(b, off, n));
    return n;
  }

  @Override
  public long skip(long n) {
    long skipped = 0;
    if (ahead != null && ahead.hasRemaining()) {
      skipped = Math.min(Math.max(0, n), ahead.remaining());
      ahead.position(ahead.position() + (int) skipped);
    }
    long more = Math.max(0, Math.min(n - skipped, end - next));
    next += more;
    return skipped + more;
  }

  @Override
  public int available() {
    return (int) Math.min(Integer.MAX_VALUE, (ahead == null ? 0 : ahead.remaining()) + end - next);
  }

  /** Reads the next chunk ahead if none is left; false at the end of the range. */
  private boolean fill() {
    if (ahead != null && ahead.hasRemaining()) {
      return true;
    }
    if (next == end) {
      return false;
    }
    if (ahead == null) {
      ahead = ByteBuffer.allocate((int) Math.min(CHUNK, end - next));
    }
    ahead.clear().limit((int) Math.min(ahead.capacity(), end - next));
    readView(ahead);
    ahead.flip();
    return true;
  }

  /** Fills {@code dst} from the view at {@link #next}, advancing it. */
  private void readView(ByteBuffer dst) {
    int n = dst.remaining();
    try {
      view.read(next, dst);
    } catch (TransportException e) {
      throw failure.apply(e);
    }
    next += n;
  }
}
