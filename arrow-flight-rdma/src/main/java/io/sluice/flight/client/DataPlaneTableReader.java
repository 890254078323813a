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
 * announcements and bodies over the transport connection, both taken by a {@link BodyReader}.
 * The call ends when this side half-closes it, once the stream has ended (or was stopped) and no
 * view of its bodies is held; closing early with none held cancels it, and the server frees the
 * stream's memory. The get's place in the client's share of the server's gets is given back once
 * the call has ended, whichever way. Not thread safe.
 */
final class DataPlaneTableReader implements TableReader {
  private final FlightClient.ExchangeReaderWriter exchange;
  private final BodyReader reader;
  private final String dataPath;
  private final DataPlaneSession session;
  private final GetShare.Place place;
  private final java.util.concurrent.atomic.AtomicBoolean callEnded = new java.util.concurrent.atomic.AtomicBoolean();
  /** Ends the call; one instance, so that the session can forget it. */
  private final Runnable ender = this::endCall;
  private boolean finished;

  /** Takes {@code place}: it is given back when the call ends. */
  DataPlaneTableReader(FlightClient.ExchangeReaderWriter exchange, DataPlaneSession session, GetShare.Place place,
      org.apache.arrow.memory.BufferAllocator allocator, byte[] grant, int chunkBytes, int depth, long timeoutNanos,
      boolean viewBodies, boolean verify) {
    this.exchange = exchange;
    this.dataPath = session.dataPath();
    this.session = session;
    this.place = place;
    // The server sends a frame at least every acknowledgement deadline or ends the stream.
    FrameLink link = new FrameLink(exchange.getReader(), exchange.getWriter(), allocator, 2 * timeoutNanos);
    this.reader = new BodyReader(allocator, link, session.connection(), session.landing(), grant, chunkBytes, depth,
        timeoutNanos, viewBodies, verify);
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

  /**
   * Ends the call. Unfinished with no view held: cancels it (the server frees the stream at once).
   * Otherwise the reader tells the server it is done (a last pull, or a stop when unfinished) and
   * the call is half-closed, and then closed, once no view of the stream's bodies is held: at once
   * for READ bodies, or when the application releases the last vector over a view, which may be
   * after this returns (the server keeps the table and the grant until then).
   */
  @Override
  public void close() {
    if (!finished && reader.views().held() == 0) {
      cancelAndClose();
      return;
    }
    if (!finished && !reader.stop()) {
      cancelAndClose(); // the server did not take the stop: ending the call is the only way left
      return;
    }
    finished = true;
    session.awaitingViews(ender);
    reader.views().afterViews(ender);
    try {
      reader.close(); // closes the root: releases the views its vectors hold
    } catch (IOException e) {
      throw CallStatus.INTERNAL.withDescription("closing the stream failed: " + e).withCause(e).toRuntimeException();
    }
  }

  private void cancelAndClose() {
    try {
      exchange.getReader().cancel("the reader closed the stream", null);
      reader.close();
      exchange.close();
    } catch (Exception e) {
      // cancelling reports itself as an error when the call ends; nothing was lost
    } finally {
      place.close();
    }
  }

  /**
   * Half-closes the call and waits for the server's end of it (which follows at once); once, on
   * whichever thread releases the last view or closes the client.
   */
  private void endCall() {
    if (!callEnded.compareAndSet(false, true)) {
      return;
    }
    session.viewsReleased(ender);
    try {
      exchange.getWriter().completed();
      // Every body was acknowledged and taken: how the server ends the call changes nothing here.
      reader.awaitServerEnd();
      exchange.close();
    } catch (Exception e) {
      throw CallStatus.INTERNAL.withDescription("closing the stream failed: " + e).withCause(e).toRuntimeException();
    } finally {
      place.close();
    }
  }
}
