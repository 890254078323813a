package io.sluice.flight.client;

import io.sluice.flight.FlightOption;
import io.sluice.flight.TableReader;
import io.sluice.flight.TableWriter;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.transport.TransportConfig;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.dictionary.DictionaryProvider;

/** Opens the client's streams on either path. Stateless. */
public final class ClientStreams {
  private ClientStreams() {}

  public static TableReader grpcGet(FlightClient flight, Ticket ticket) {
    return new GrpcTableReader(flight.getStream(ticket));
  }

  public static TableWriter grpcPut(FlightClient flight, FlightDescriptor descriptor, VectorSchemaRoot root,
      DictionaryProvider dictionaries) {
    return new GrpcTableWriter(flight, descriptor, root, dictionaries);
  }

  public static TableReader dataPlaneGet(FlightClient flight, DataPlaneSession session, BufferAllocator allocator,
      Ticket ticket, TransportConfig config) {
    byte[] grant = grant(session);
    byte[] command = DataPlaneProtocol.encode(new OpenGet(grant, ticket.getBytes()));
    FlightClient.ExchangeReaderWriter exchange = flight.doExchange(FlightDescriptor.command(command));
    int chunk = (int) Math.min(Integer.MAX_VALUE, config.value(FlightOption.READ_CHUNK_BYTES));
    int depth = (int) Math.min(FlightOption.MAX_STREAM_WINDOW, config.value(FlightOption.STREAM_WINDOW));
    return new DataPlaneTableReader(exchange, session, allocator, grant, chunk, depth, timeoutNanos(config),
        config.value(FlightOption.ZERO_COPY), config.value(FlightOption.VERIFY_READS));
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
    } catch (ExecutionException | TimeoutException e) {
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
