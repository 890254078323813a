package io.sluice.spark.shuffle;

import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * An InputStream over a view of off-heap memory. It does not own the memory: whoever owns the
 * region keeps it alive until the stream has been read. Not thread safe.
 */
public final class RegionInputStream extends InputStream {
  private final ByteBuffer buf;

  public RegionInputStream(ByteBuffer view) {
    this.buf = view;
  }

  @Override
  public int read() {
    return buf.hasRemaining() ? buf.get() & 0xff : -1;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (len == 0) {
      return 0;
    }
    if (!buf.hasRemaining()) {
      return -1;
    }
    int n = Math.min(len, buf.remaining());
    buf.get(b, off, n);
    return n;
  }

  @Override
  public long skip(long n) {
    int k = (int) Math.max(0, Math.min(n, buf.remaining()));
    buf.position(buf.position() + k);
    return k;
  }

  @Override
  public int available() {
    return buf.remaining();
  }
}
