package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import io.sluice.flight.TableReader;
import io.sluice.flight.TableWriter;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.transport.ResourceExhaustedException;
import io.sluice.transport.TransportConfig;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/** Opens the client's streams on either path. Stateless. */
public final class ClientStreams {
  /** The first wait before asking again for a get the server refused as busy; it doubles. */
  private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private ClientStreams() {}

  public static TableReader grpcGet(FlightClient flight, Ticket ticket) {
    return new GrpcTableReader(flight.getStream(ticket));
  }

  public static TableWriter grpcPut(FlightClient flight, FlightDescriptor descriptor, VectorSchemaRoot root,
      DictionaryProvider dictionaries) {
    return new GrpcTableWriter(flight, descriptor, root, dictionaries);
  }

  /**
   * Opens a data-plane get and waits for the server to take it (its schema), within {@code
   * waitNanos}: while this client holds as many gets of the server as its offer allows, the get
   * waits for one of them to end; a get the server refuses with RESOURCE_EXHAUSTED (all its get
   * threads busy, or this client's host's share of them, or this client's last get not yet let go
   * on its side), or whose grant it refuses for load (a {@link ResourceExhaustedException}, ERROR
   * code EXHAUSTED, whatever its text), is asked again, backing off, until the same deadline. Any
   * other failure of the grant fails the get at once.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException TIMED_OUT naming the bound and {@link
   *     FlightOption#DATA_PLANE_GETS_PER_CLIENT} when no get of the server ended in time,
   *     RESOURCE_EXHAUSTED when the server still refused at the deadline, or the server's error
   */
  public static TableReader dataPlaneGet(FlightClient flight, DataPlaneSession session, BufferAllocator allocator,
      Ticket ticket, TransportConfig config, long waitNanos) {
    long start = System.nanoTime();
    long backoffNanos = FIRST_BACKOFF_NANOS;
    while (true) {
      try {
        DataPlaneTableReader reader = open(flight, session, allocator, ticket, config,
            waitNanos - (System.nanoTime() - start));
        try {
          reader.getSchema(); // the server's answer: the schema, or why it refused
          return reader;
        } catch (RuntimeException | Error e) {
          reader.close(); // gives the get's place back
          throw e;
        }
      } catch (FlightRuntimeException e) {
        if (e.status().code() != FlightStatusCode.RESOURCE_EXHAUSTED) {
          throw e;
        }
        long left = waitNanos - (System.nanoTime() - start);
        if (left <= 0) {
          throw CallStatus.RESOURCE_EXHAUSTED.withDescription(e.getMessage() + " (refused again for "
              + TimeUnit.NANOSECONDS.toMillis(waitNanos) + " ms)").withCause(e).toRuntimeException();
        }
        sleep(Math.min(backoffNanos, left));
        backoffNanos = Math.min(2 * backoffNanos, MAX_BACKOFF_NANOS);
      }
    }
  }

  /** A get of {@code ticket} in a place of the client's share, taken within {@code waitNanos}. */
  private static DataPlaneTableReader open(FlightClient flight, DataPlaneSession session, BufferAllocator allocator,
      Ticket ticket, TransportConfig config, long waitNanos) {
    GetShare.Place place;
    try {
      place = session.takeGet(Math.max(0, waitNanos));
    } catch (TimeoutException e) {
      throw CallStatus.TIMED_OUT.withDescription(e.getMessage()).withCause(e).toRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CallStatus.CANCELLED.withDescription("interrupted while waiting for a data-plane get").toRuntimeException();
    } catch (IllegalStateException e) {
      throw CallStatus.CANCELLED.withDescription(e.getMessage()).toRuntimeException();
    }
    try {
      byte[] grant = grant(session);
      byte[] command = DataPlaneProtocol.encode(new OpenGet(grant, ticket.getBytes()));
      FlightClient.ExchangeReaderWriter exchange = flight.doExchange(FlightDescriptor.command(command));
      int chunk = (int) Math.min(Integer.MAX_VALUE, config.value(FlightOption.READ_CHUNK_BYTES));
      int depth = (int) Math.min(FlightOption.MAX_STREAM_WINDOW, config.value(FlightOption.STREAM_WINDOW));
      return new DataPlaneTableReader(exchange, session, place, allocator, grant, chunk, depth, timeoutNanos(config),
          config.value(FlightOption.ZERO_COPY), config.value(FlightOption.VERIFY_READS));
    } catch (RuntimeException | Error e) {
      place.close();
      throw e;
    }
  }

  private static void sleep(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CallStatus.CANCELLED.withDescription("interrupted while a refused data-plane get backed off")
          .toRuntimeException();
    }
  }

  public static TableWriter dataPlanePut(FlightClient flight, DataPlaneSession session, BufferAllocator allocator,
      FlightDescriptor descriptor, VectorSchemaRoot root, DictionaryProvider dictionaries, TransportConfig config) {
    ByteBuffer d = descriptor.serialize();
    byte[] descriptorBytes = new byte[d.remaining()];
    d.get(descriptorBytes);
    byte[] command = DataPlaneProtocol.encode(
        new OpenPut(grant(session), descriptorBytes, session.transport().localAddress()));
    FlightClient.ExchangeReaderWriter exchange = flight.doExchange(FlightDescriptor.command(command));
    int window = (int) Math.min(FlightOption.MAX_STREAM_WINDOW, config.value(FlightOption.STREAM_WINDOW));
    return new DataPlaneTableWriter(exchange, session, allocator, root, dictionaries,
        config.value(FlightOption.STAGING_BYTES), window, timeoutNanos(config));
  }

  private static long timeoutNanos(TransportConfig config) {
    return TimeUnit.MILLISECONDS.toNanos(config.value(FlightOption.ACK_TIMEOUT_MS));
  }

  private static byte[] grant(DataPlaneSession session) {
    try {
      return session.grant();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ResourceExhaustedException) { // refused for load: the caller asks again
        throw CallStatus.RESOURCE_EXHAUSTED.withDescription("the server granted no data-plane stream for now: "
            + e.getCause().getMessage()).toRuntimeException();
      }
      throw CallStatus.UNAVAILABLE.withDescription("the server granted no data-plane stream: "
          + (e.getCause() != null ? e.getCause() : e)).toRuntimeException();
    } catch (TimeoutException e) {
      throw CallStatus.UNAVAILABLE.withDescription("the server granted no data-plane stream: "
          + (e.getCause() != null ? e.getCause() : e)).toRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CallStatus.CANCELLED.withDescription("interrupted").toRuntimeException();
    } catch (IllegalArgumentException e) {
      throw CallStatus.INTERNAL.withDescription("unreadable grant: " + e.getMessage()).toRuntimeException();
    }
  }

}
