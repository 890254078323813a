package io.sluice.spark.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RegionTruncatedException;
import io.sluice.transport.RemoteView;
import io.sluice.transport.TransportException;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ViewInputStream} over a view that is an array: small reads, single bytes, reads larger
 * than a chunk and skips give the range's bytes; a view whose file is cut fails the next read that
 * needs it with what the failure function makes of it.
 */
class ViewInputStreamTest {
  private static final byte[] BYTES = new byte[3 * ViewInputStream.CHUNK + 1234];

  static {
    new Random(5).nextBytes(BYTES);
  }

  /** A view of {@link #BYTES} whose file can be cut to a length. */
  private static final class ArrayView implements RemoteView {
    int fileLength = BYTES.length;
    int reads;

    @Override
    public ByteBuffer buffer() {
      throw new AssertionError("the stream touched the view's mapping");
    }

    @Override
    public long length() {
      return BYTES.length;
    }

    @Override
    public void read(long offset, ByteBuffer dst) throws TransportException {
      reads++;
      if (offset + dst.remaining() > fileLength) {
        throw new RegionTruncatedException(new NodeAddress("127.0.0.1", 1), 0xabc, "/cut", BYTES.length, offset,
            dst.remaining(), fileLength);
      }
      dst.put(BYTES, (int) offset, dst.remaining());
    }

    @Override
    public void close() {}
  }

  private static ViewInputStream over(ArrayView v, int offset, int length) {
    return new ViewInputStream(v, offset, length, e -> new IllegalStateException("fetch failed: " + e.getMessage(), e));
  }

  @Test
  void smallReadsSingleBytesAndLargeReadsGiveTheRange() throws IOException {
    int from = 100;
    int length = BYTES.length - 200;
    ArrayView v = new ArrayView();
    InputStream in = over(v, from, length);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(in.read());
    byte[] small = new byte[7];
    out.write(small, 0, in.read(small));
    byte[] large = new byte[2 * ViewInputStream.CHUNK];
    int n;
    while ((n = in.read(large)) > 0) {
      out.write(large, 0, n);
      int b = in.read();
      if (b < 0) {
        break;
      }
      out.write(b);
    }
    assertEquals(-1, in.read());
    assertEquals(-1, in.read(small));
    assertArrayEquals(Arrays.copyOfRange(BYTES, from, from + length), out.toByteArray());
    assertEquals(0, in.available());
  }

  @Test
  void skipsMoveWithoutReading() throws IOException {
    ArrayView v = new ArrayView();
    DataInputStream in = new DataInputStream(over(v, 0, BYTES.length));
    assertEquals(BYTES[0], in.readByte());
    assertEquals(10, in.skip(10));
    assertEquals(BYTES[11], in.readByte());
    long beyond = BYTES.length - 12 - 5;
    assertEquals(beyond, in.skip(beyond));
    byte[] last = new byte[5];
    in.readFully(last);
    assertArrayEquals(Arrays.copyOfRange(BYTES, BYTES.length - 5, BYTES.length), last);
    assertEquals(0, in.skip(1));
  }

  @Test
  void aCutFileFailsTheNextReadThatNeedsItWithTheFailureGiven() throws IOException {
    ArrayView v = new ArrayView();
    InputStream in = over(v, 0, BYTES.length);
    byte[] b = new byte[100];
    assertEquals(100, in.read(b));
    v.fileLength = ViewInputStream.CHUNK + 10;
    // The chunk read ahead is still served; the next one is cut.
    for (int i = 100; i < ViewInputStream.CHUNK; i += 100) {
      in.read(b, 0, Math.min(100, ViewInputStream.CHUNK - i));
    }
    assertEquals(1, v.reads);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> in.read(b));
    assertEquals(RegionTruncatedException.class, e.getCause().getClass());
    IllegalStateException large = assertThrows(IllegalStateException.class,
        () -> over(v, 0, BYTES.length).read(new byte[BYTES.length]));
    RegionTruncatedException cause = (RegionTruncatedException) large.getCause();
    assertEquals(ViewInputStream.CHUNK + 10, cause.fileSize());
    assertSame(RegionTruncatedException.class, cause.getClass());
  }
}
