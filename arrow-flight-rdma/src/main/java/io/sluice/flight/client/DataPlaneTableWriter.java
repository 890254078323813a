package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import io.sluice.flight.TableWriter;
import io.sluice.flight.memory.Staging;
import io.sluice.flight.plane.BodySender;
import io.sluice.flight.plane.FrameLink;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.AckFrame;
import io.sluice.flight.table.MessageForm;
import io.sluice.transport.TransportException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * A data-plane put: each batch is copied into client memory registered for the server alone,
 * announced in a frame, READ by the server, acknowledged. One thread reads the server's
 * acknowledgements (and, at the end, its verdict). Not thread safe for the writing side.
 */
final class DataPlaneTableWriter implements TableWriter {
  private final FlightClient.ExchangeReaderWriter exchange;
  private final VectorSchemaRoot root;
  private final Staging staging;
  private final BodySender sender;
  private final String dataPath;
  private final Thread ackReader;
  private volatile Throwable failure;
  private boolean done;

  DataPlaneTableWriter(FlightClient.ExchangeReaderWriter exchange, DataPlaneSession session,
      BufferAllocator allocator, VectorSchemaRoot root, DictionaryProvider dictionaries, long budgetBytes,
      int window, long timeoutNanos) {
    this.exchange = exchange;
    this.root = root;
    this.dataPath = session.dataPath();
    FrameLink link = new FrameLink(exchange.getReader(), exchange.getWriter(), allocator);
    this.staging = new Staging(session.memory(), session.serverNode(), budgetBytes,
        FlightOption.STAGING_BYTES.key(), window, timeoutNanos);
    this.sender = new BodySender(staging, link);
    this.ackReader = new Thread(() -> readAcknowledgements(link), "sluice-flight-put-acks");
    ackReader.setDaemon(true);
    ackReader.start();
    try {
      MessageForm form = MessageForm.of(root.getSchema(), dictionaries);
      try {
        sender.sendSchema(form.messageSchema());
        for (ArrowDictionaryBatch d : form.dictionaries()) {
          sender.send(d);
        }
      } finally {
        form.dictionaries().forEach(ArrowDictionaryBatch::close);
      }
    } catch (TimeoutException | InterruptedException | TransportException | RuntimeException e) {
      close();
      throw asFlight(failure != null ? failure : e);
    }
  }

  private void readAcknowledgements(FrameLink link) {
    try {
      while (true) {
        Optional<ByteBuffer> frame = link.receive();
        if (frame.isEmpty()) {
          if (!staging.isCancelled() && staging.inFlight() > 0) {
            fail(new IllegalStateException("the server ended the put before reading every batch"));
          }
          return;
        }
        if (!(DataPlaneProtocol.decodeFrame(frame.get()) instanceof AckFrame ack)) {
          fail(new IllegalArgumentException("the server sent a frame other than an acknowledgement"));
          return;
        }
        sender.acknowledge(ack);
      }
    } catch (RuntimeException e) {
      fail(e);
    }
  }

  private void fail(Throwable e) {
    if (failure == null) {
      failure = e;
    }
    staging.cancel(e);
  }

  @Override
  public void putNext() {
    checkFailure();
    try (ArrowRecordBatch batch = new VectorUnloader(root).getRecordBatch()) {
      sender.send(batch);
    } catch (TimeoutException | InterruptedException | TransportException | CancellationException e) {
      throw asFlight(failure != null ? failure : e);
    }
  }

  @Override
  public void completed() {
    try {
      sender.awaitAcknowledged();
      exchange.getWriter().completed();
      long deadline = System.nanoTime() + 2 * staging.timeoutNanos();
      ackReader.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      if (ackReader.isAlive()) {
        throw CallStatus.TIMED_OUT.withDescription("the server did not finish the put in time").toRuntimeException();
      }
      checkFailure();
    } catch (TimeoutException | InterruptedException | CancellationException e) {
      throw asFlight(failure != null ? failure : e);
    } finally {
      done = true;
      close();
    }
  }

  private void checkFailure() {
    if (failure != null) {
      throw asFlight(failure);
    }
  }

  private static FlightRuntimeException asFlight(Throwable e) {
    if (e instanceof FlightRuntimeException f) {
      return f;
    }
    if (e instanceof CancellationException && e.getCause() instanceof FlightRuntimeException f) {
      return f; // the server's refusal cancelled the staging: report the refusal itself
    }
    if (e instanceof TimeoutException) {
      return CallStatus.TIMED_OUT.withDescription(e.getMessage()).withCause(e).toRuntimeException();
    }
    return CallStatus.INTERNAL.withDescription("data-plane put failed: " + e).withCause(e).toRuntimeException();
  }

  @Override
  public String dataPath() {
    return dataPath;
  }

  @Override
  public void close() {
    if (!done) {
      done = true;
      exchange.getReader().cancel("the writer closed the put", null);
    }
    staging.close();
    try {
      exchange.close();
    } catch (Exception e) {
      // a cancelled call reports its cancellation here; nothing is lost
    }
  }
}
