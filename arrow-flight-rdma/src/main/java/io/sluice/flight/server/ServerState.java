package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import org.apache.arrow.flight.CallStatus;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What the stream handlers of one server share ({@code plainStreams}: threads for plain streams;
 * {@code dataPlaneGets}: threads that serve data-plane gets; {@code putBudget}: what puts hold); {@code activeGrants} counts streams whose reader
 * may READ a table now. {@code transport} is empty when the data plane
 * is off (no secret, or the transport could not start); then every stream is plain Flight.
 * {@code metrics} counts what the handlers serve.
 * Owned by {@link io.sluice.flight.SluiceFlightServer}, which closes the parts.
 */
record ServerState(
    BufferAllocator allocator,
    TableRegistry tables,
    Optional<Transport> transport,
    Grants grants,
    ServedGets gets,
    int window,
    long windowBytes,
    long ackTimeoutNanos,
    int readChunkBytes,
    long connectTimeoutNanos,
    boolean puts,
    long maxPutBytes,
    PutBudget putBudget,
    StreamPool plainStreams,
    StreamPool dataPlaneGets,
    AtomicInteger activeStreams,
    AtomicInteger activeGrants,
    Optional<io.sluice.flight.CallToken.Key> offerKey,
    FlightMetrics metrics) {

  /** Refuses a put unless puts are enabled. */
  void checkPutsAllowed() {
    if (!puts) {
      throw CallStatus.UNAUTHORIZED.withDescription("this server accepts no puts ("
          + FlightOption.PUTS.key() + " is false)").toRuntimeException();
    }
  }

  /**
   * Refuses a put once it would store more than {@code maxPutBytes} (bodies and IPC metadata), or
   * once puts together would hold more than the budget allows; else reserves {@code bytes} for it.
   */
  void checkPutSize(PutBudget.Put put, long bytes) {
    if (bytes > maxPutBytes) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("a put of more than " + maxPutBytes
          + " bytes (" + FlightOption.MAX_PUT_BYTES.key() + ", batch bodies and IPC metadata); nothing was stored")
          .toRuntimeException();
    }
    put.grow(bytes);
  }

  /** Stores what a put sent, keeping its reservation for the table (released on failure). */
  void storePut(String name, PutBudget.Put put, FlightTable table) {
    try {
      put.commit();
    } catch (RuntimeException e) {
      table.release();
      throw e;
    }
    try {
      tables.storePut(name, table);
    } catch (RuntimeException e) {
      putBudget.forget(name);
      throw e;
    }
  }

  /** Removes a table, and what a put's table held from the put budget. */
  boolean remove(String name) {
    putBudget.forget(name);
    return tables.remove(name);
  }

  /**
   * Publishes {@code table} (taking the caller's reference): with the data plane on, its bodies
   * are first copied into registered memory once, which every stream then READs.
   */
  void publish(String name, FlightTable table) throws TransportException {
    FlightTable served = table;
    if (transport.isPresent()) {
      try {
        served = table.register(transport.get(), allocator);
      } catch (TransportException | RuntimeException e) {
        table.release();
        throw e;
      }
    }
    tables.publish(name, served);
    putBudget.forget(name);
  }
}
