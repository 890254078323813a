package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import org.apache.arrow.flight.CallStatus;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.BufferAllocator;

/**
 * What the stream handlers of one server share ({@code workers}: threads for plain streams and for
 * reading data-plane acknowledgements); {@code activeGrants} counts streams whose reader
 * may READ a table now. {@code transport} is empty when the data plane
 * is off (no secret, or the transport could not start); then every stream is plain Flight.
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
    ExecutorService workers,
    AtomicInteger activeStreams,
    AtomicInteger activeGrants) {

  /** Refuses a put unless puts are enabled. */
  void checkPutsAllowed() {
    if (!puts) {
      throw CallStatus.UNAUTHORIZED.withDescription("this server accepts no puts ("
          + FlightOption.PUTS.key() + " is false)").toRuntimeException();
    }
  }

  /** Refuses a put once it would store more than {@code maxPutBytes} of bodies. */
  void checkPutSize(long bodyBytes) {
    if (bodyBytes > maxPutBytes) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("a put of more than " + maxPutBytes
          + " body bytes (" + FlightOption.MAX_PUT_BYTES.key() + "); nothing was stored").toRuntimeException();
    }
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
  }
}
