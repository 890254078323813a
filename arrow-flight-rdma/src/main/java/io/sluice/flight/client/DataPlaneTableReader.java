package io.sluice.flight.client;

import io.sluice.flight.TableReader;
import io.sluice.flight.plane.BodyReader;
import io.sluice.flight.plane.FrameLink;
import java.io.IOException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A data-plane get as a {@link TableReader}: the schema and the outcome over the DoExchange call,
 * announcements and bodies over the transport connection, both taken by a {@link BodyReader}. When the server completes, this side completes too; closing earlier
 * cancels the call, and the server frees the stream's memory. Not thread safe.
 */
final class DataPlaneTableReader implements TableReader {
  private final FlightClient.ExchangeReaderWriter exchange;
  private final BodyReader reader;
  private final String dataPath;
  private boolean finished;

  DataPlaneTableReader(FlightClient.ExchangeReaderWriter exchange, DataPlaneSession session,
      org.apache.arrow.memory.BufferAllocator allocator, byte[] grant, int chunkBytes, int depth, long timeoutNanos) {
    this.exchange = exchange;
    this.dataPath = session.dataPath();
    // The server sends a frame at least every acknowledgement deadline or ends the stream.
    FrameLink link = new FrameLink(exchange.getReader(), exchange.getWriter(), allocator, 2 * timeoutNanos);
    this.reader = new BodyReader(allocator, link, session.connection(), session.landing(), grant, chunkBytes, depth,
        timeoutNanos);
  }

  @Override
  public Schema getSchema() {
    return getRoot().getSchema();
  }

  @Override
  public VectorSchemaRoot getRoot() {
    try {
      return reader.getVectorSchemaRoot();
    } catch (IOException e) {
      throw failure(e);
    }
  }

  @Override
  public boolean next() {
    if (finished) {
      return false;
    }
    try {
      if (reader.loadNextBatch()) {
        return true;
      }
    } catch (IOException e) {
      throw failure(e);
    }
    finished = true;
    exchange.getWriter().completed();
    return false;
  }

  @Override
  public DictionaryProvider getDictionaryProvider() {
    getRoot();
    return reader;
  }

  @Override
  public String dataPath() {
    return dataPath;
  }

  /** Body bytes READ so far. */
  long bytesRead() {
    return reader.bytesRead();
  }

  private FlightRuntimeException failure(IOException e) {
    Throwable c = e.getCause();
    if (c instanceof FlightRuntimeException f) {
      return f;
    }
    return CallStatus.INTERNAL.withDescription("data-plane stream failed: " + e.getMessage()).withCause(e)
        .toRuntimeException();
  }

  @Override
  public void close() {
    try {
      if (!finished) {
        exchange.getReader().cancel("the reader closed the stream", null);
      }
      reader.close();
      exchange.close();
    } catch (Exception e) {
      if (!finished) {
        return; // cancelling reports itself as an error when the call ends; nothing was lost
      }
      throw CallStatus.INTERNAL.withDescription("closing the stream failed: " + e).withCause(e).toRuntimeException();
    }
  }
}
