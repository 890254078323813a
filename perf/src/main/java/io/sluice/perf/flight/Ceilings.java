package io.sluice.perf.flight;

import io.sluice.transport.Connection;
import io.sluice.transport.ReadRequest;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.ipc.message.ArrowBuffer;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * What the Flight paths are measured against, each moving the measured table's batch bodies (in
 * Arrow's IPC body layout: every buffer padded with zeros to 8 bytes) body by body into memory of
 * the driver, where the same {@link BodySum} reads every byte: the transport's own READ from a
 * {@link CeilingSource} (several bodies in flight, ranges of at most a chunk, as the Flight
 * reader does), a memcpy of the driver's own copy of the table, and a loopback socket stream
 * from a writing thread. All three see the same bytes, so their checksums agree with the
 * server's. Stateless.
 */
final class Ceilings {
  private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

  private Ceilings() {}

  /**
   * The transport READ of every body of {@code ceiling} over {@code connection}, {@code depth} at a
   * time, {@code passes} times over; one sum per pass.
   */
  static FlightPaths.Timed transportRead(Transport transport, Connection connection, ServerAnnouncement.Ceiling ceiling,
      int passes, int depth, int chunkBytes) throws IOException {
    long largest = ceiling.segments().stream().flatMap(s -> s.bodyLengths().stream()).mapToLong(Long::longValue)
        .max().orElse(0);
    List<RegisteredRegion> landing = new ArrayList<>();
    try {
      for (int i = 0; i < depth; i++) {
        landing.add(transport.allocate((int) Math.max(8, largest)));
      }
      List<BodySum> sums = new ArrayList<>();
      record InFlight(RegisteredRegion into, long length, BodySum sum, CompletableFuture<Void> read) {}
      ArrayDeque<InFlight> reading = new ArrayDeque<>();
      ArrayDeque<RegisteredRegion> free = new ArrayDeque<>(landing);
      long start = System.nanoTime();
      for (int pass = 0; pass < passes; pass++) {
      BodySum sum = new BodySum();
      sums.add(sum);
      for (ServerAnnouncement.Segment s : ceiling.segments()) {
        long offset = 0;
        for (long length : s.bodyLengths()) {
          if (free.isEmpty()) {
            InFlight done = reading.poll();
            await(done.read());
            done.sum().addRange(done.into().buffer().limit((int) done.length()));
            free.add(done.into());
          }
          RegisteredRegion into = free.poll();
          List<ReadRequest> ranges = new ArrayList<>();
          for (long off = 0; off < length; off += chunkBytes) {
            ranges.add(new ReadRequest(s.region(), offset + off, into, off, (int) Math.min(chunkBytes, length - off)));
          }
          reading.add(new InFlight(into, length, sum,
              CompletableFuture.allOf(connection.readBatch(ranges).toArray(CompletableFuture[]::new))));
          offset += CeilingSource.align(length);
        }
      }
      }
      for (InFlight done; (done = reading.poll()) != null; ) {
        await(done.read());
        done.sum().addRange(done.into().buffer().limit((int) done.length()));
      }
      return new FlightPaths.Timed(System.nanoTime() - start, connection.dataPath(),
          sums.stream().map(BodySum::value).toList());
    } catch (TransportException e) {
      throw new IOException("the ceiling's landing memory: " + e.getMessage(), e);
    } finally {
      landing.forEach(RegisteredRegion::close);
    }
  }

  /** A memcpy of every body of {@code batches} into one landing buffer, each then summed. */
  static FlightPaths.Timed memcpy(List<ArrowRecordBatch> batches) {
    ByteBuffer landing = ByteBuffer.allocateDirect((int) Math.max(8, largest(batches)));
    long base = MemoryUtil.getByteBufferAddress(landing);
    BodySum sum = new BodySum();
    long start = System.nanoTime();
    BodyPieces<RuntimeException> copy = new BodyPieces<>() {
      @Override
      public void zeros(long at, long n) {
        MemoryUtil.setMemory(base + at, n, (byte) 0);
      }

      @Override
      public void buffer(ArrowBuf buffer, ArrowBuffer place) {
        MemoryUtil.copyMemory(buffer.memoryAddress(), base + place.getOffset(), place.getSize());
      }
    };
    for (ArrowRecordBatch b : batches) {
      layOut(b, copy);
      sum.addRange(base, b.computeBodyLength());
    }
    return new FlightPaths.Timed(System.nanoTime() - start, "memcpy", sum.value());
  }

  /**
   * A loopback TCP stream of every body of {@code batches}: a thread writes each buffer (and its
   * zero padding) straight from the table's memory, this thread reads each body into one landing
   * buffer and sums it.
   */
  static FlightPaths.Timed socketStream(List<ArrowRecordBatch> batches) throws IOException {
    ByteBuffer landing = ByteBuffer.allocateDirect((int) Math.max(8, largest(batches)));
    ByteBuffer zeros = ByteBuffer.allocateDirect(64);
    try (ServerSocketChannel listener = ServerSocketChannel.open()
        .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
      CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
        try (SocketChannel out = SocketChannel.open(listener.getLocalAddress())) {
          BodyPieces<IOException> send = new BodyPieces<>() {
            @Override
            public void zeros(long at, long n) throws IOException {
              writeZeros(out, zeros, n);
            }

            @Override
            public void buffer(ArrowBuf buffer, ArrowBuffer place) throws IOException {
              ByteBuffer bytes = buffer.nioBuffer(0, (int) place.getSize());
              while (bytes.hasRemaining()) {
                out.write(bytes);
              }
            }
          };
          for (ArrowRecordBatch b : batches) {
            layOut(b, send);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
      BodySum sum = new BodySum();
      long start = System.nanoTime();
      try (SocketChannel in = listener.accept()) {
        for (ArrowRecordBatch b : batches) {
          ByteBuffer body = landing.duplicate().clear().limit((int) b.computeBodyLength());
          while (body.hasRemaining()) {
            if (in.read(body) < 0) {
              throw new IOException("the socket stream ended early");
            }
          }
          sum.addRange(body.flip());
        }
      }
      long nanos = System.nanoTime() - start;
      await(writer);
      return new FlightPaths.Timed(nanos, "socket", sum.value());
    }
  }

  /** Where the pieces of one batch body go, in body order; {@code at} is the body offset. */
  private interface BodyPieces<E extends Exception> {
    void zeros(long at, long n) throws E;

    void buffer(ArrowBuf buffer, ArrowBuffer place) throws E;
  }

  /** Hands the body of {@code b} to {@code to} in Arrow's IPC body layout: each buffer at its place, zeros between and after. */
  private static <E extends Exception> void layOut(ArrowRecordBatch b, BodyPieces<E> to) throws E {
    long at = 0;
    List<ArrowBuf> buffers = b.getBuffers();
    List<ArrowBuffer> layout = b.getBuffersLayout();
    for (int i = 0; i < buffers.size(); i++) {
      ArrowBuffer place = layout.get(i);
      to.zeros(at, place.getOffset() - at);
      to.buffer(buffers.get(i), place);
      at = place.getOffset() + place.getSize();
    }
    to.zeros(at, b.computeBodyLength() - at);
  }

  private static void writeZeros(SocketChannel out, ByteBuffer zeros, long n) throws IOException {
    for (long left = n; left > 0; ) {
      ByteBuffer z = zeros.duplicate().clear().limit((int) Math.min(left, zeros.capacity()));
      left -= out.write(z);
    }
  }

  private static long largest(List<ArrowRecordBatch> batches) {
    return batches.stream().mapToLong(ArrowRecordBatch::computeBodyLength).max().orElse(0);
  }

  private static void await(CompletableFuture<Void> f) throws IOException {
    try {
      f.get(TIMEOUT_NANOS, TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IOException("ceiling transfer failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("ceiling transfer took longer than " + TIMEOUT_NANOS / 1_000_000_000 + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }
}
