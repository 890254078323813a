package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import io.sluice.flight.memory.Staging;
import io.sluice.flight.plane.BodyReader;
import io.sluice.flight.plane.BodySender;
import io.sluice.flight.plane.FrameLink;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.AckFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Connection;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightProducer.ServerStreamListener;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowDictionaryBatch;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of data-plane streams, opened by a DoExchange whose command is a {@link
 * DataPlaneProtocol} command carrying a grant. Get: the batches are staged in memory registered
 * for the granted peer only, announced in frames, and freed when acknowledged, cancelled or past
 * the deadline. Put: the server connects to the client's transport, checks that it is the granted
 * peer, READs the bodies into its own registered memory and stores the table.
 *
 * <p>Stateless; each call runs on its gRPC thread, plus one acknowledgement reader per get.
 */
final class DataPlaneStreams {
  private static final Logger LOG = LoggerFactory.getLogger(DataPlaneStreams.class);

  private DataPlaneStreams() {}

  static void open(ServerState state, byte[] command, FlightStream in, ServerStreamListener out) {
    Transport transport = state.transport().orElseThrow(() -> CallStatus.UNAVAILABLE
        .withDescription("this server has no data plane").toRuntimeException());
    Object open;
    try {
      open = DataPlaneProtocol.decodeCommand(command);
    } catch (IllegalArgumentException e) {
      throw CallStatus.INVALID_ARGUMENT.withDescription("bad data-plane command: " + e.getMessage()).toRuntimeException();
    }
    byte[] grant = open instanceof OpenGet g ? g.grant() : ((OpenPut) open).grant();
    long peer = state.grants().redeem(grant).orElseThrow(() -> CallStatus.UNAUTHENTICATED
        .withDescription("data-plane grant unknown, already used or expired").toRuntimeException());
    state.activeStreams().incrementAndGet();
    try {
      if (open instanceof OpenGet g) {
        get(state, transport, peer, g, in, out);
      } else {
        put(state, transport, peer, (OpenPut) open, in, out);
      }
    } finally {
      state.activeStreams().decrementAndGet();
    }
  }

  private static void get(ServerState state, Transport transport, long peer, OpenGet open, FlightStream in,
      ServerStreamListener out) {
    String name = TableRegistry.nameOf(new Ticket(open.ticket())).orElseThrow(() -> CallStatus.NOT_FOUND
        .withDescription("not a ticket of this server").toRuntimeException());
    FlightTable table = state.tables().acquire(name).orElseThrow(() -> CallStatus.NOT_FOUND
        .withDescription("no table '" + name + "'").toRuntimeException());
    FrameLink link = new FrameLink(in, out, state.allocator());
    try (Staging staging = new Staging(transport, peer, state.budget(), FlightOption.STAGING_BYTES.key(),
        state.window(), state.ackTimeoutNanos())) {
      BodySender sender = new BodySender(staging, link);
      out.setOnCancelHandler(() -> staging.cancel(new CancellationException("the client cancelled the stream")));
      state.ackReaders().execute(() -> readAcknowledgements(link, sender, staging));
      sender.sendSchema(table.messageSchema());
      for (ArrowDictionaryBatch d : table.dictionaries()) {
        sender.send(d);
      }
      for (ArrowRecordBatch b : table.batches()) {
        sender.send(b);
      }
      sender.awaitAcknowledged();
      out.completed();
    } catch (TimeoutException e) {
      LOG.info("Data-plane stream of '{}' to peer {} timed out: {}", name, Long.toHexString(peer), e.getMessage());
      out.error(CallStatus.TIMED_OUT.withDescription(e.getMessage()).toRuntimeException());
    } catch (CancellationException e) {
      out.error(CallStatus.CANCELLED.withDescription(e.getMessage()).toRuntimeException());
    } catch (IllegalArgumentException e) {
      out.error(CallStatus.RESOURCE_EXHAUSTED.withDescription(e.getMessage()).toRuntimeException());
    } catch (TransportException | RuntimeException e) {
      LOG.warn("Data-plane stream of '{}' failed", name, e);
      out.error(CallStatus.INTERNAL.withDescription("serving the stream failed: " + e).withCause(e).toRuntimeException());
    } catch (OutOfMemoryError e) {
      LOG.warn("Data-plane stream of '{}': out of memory staging a batch", name, e);
      out.error(CallStatus.RESOURCE_EXHAUSTED.withDescription("the server ran out of memory staging a batch: "
          + e.getMessage()).toRuntimeException());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      out.error(CallStatus.CANCELLED.withDescription("server shutting down").toRuntimeException());
    } catch (Error e) {
      LOG.error("Data-plane stream of '{}' failed", name, e);
      out.error(CallStatus.INTERNAL.withDescription("serving the stream failed: " + e).toRuntimeException());
      throw e;
    } finally {
      table.release();
    }
  }

  /** Runs on its own thread: the client's acknowledgements, until it completes or the call ends. */
  private static void readAcknowledgements(FrameLink link, BodySender sender, Staging staging) {
    try {
      while (true) {
        Optional<ByteBuffer> frame = link.receive();
        if (frame.isEmpty()) {
          return;
        }
        if (!(DataPlaneProtocol.decodeFrame(frame.get()) instanceof AckFrame ack)) {
          staging.cancel(new IllegalArgumentException("the client sent a frame other than an acknowledgement"));
          return;
        }
        sender.acknowledge(ack);
      }
    } catch (RuntimeException e) {
      staging.cancel(e);
    }
  }

  private static void put(ServerState state, Transport transport, long peer, OpenPut open, FlightStream in,
      ServerStreamListener out) {
    String name;
    try {
      name = TableRegistry.nameOf(FlightDescriptor.deserialize(ByteBuffer.wrap(open.descriptor())))
          .orElseThrow(() -> new IllegalArgumentException("a put needs a path descriptor with the table's name"));
    } catch (IOException | RuntimeException e) {
      throw CallStatus.INVALID_ARGUMENT.withDescription("bad put descriptor: " + e.getMessage()).toRuntimeException();
    }
    Connection connection;
    try {
      connection = transport.connect(open.readFrom()).get(state.connectTimeoutNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw CallStatus.UNAVAILABLE.withDescription("cannot reach the client's transport at " + open.readFrom()
          + ": " + (e.getCause() != null ? e.getCause() : e)).toRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw CallStatus.CANCELLED.withDescription("server shutting down").toRuntimeException();
    }
    try (connection) {
      if (connection.peerNode() != peer) {
        throw CallStatus.UNAUTHENTICATED.withDescription(
            "the transport at " + open.readFrom() + " is not the peer the grant was issued to").toRuntimeException();
      }
      FrameLink link = new FrameLink(in, out, state.allocator());
      FlightTable.Builder builder = null;
      try (BodyReader reader = new BodyReader(state.allocator(), link, connection, state.landing().orElseThrow(),
          state.readChunkBytes(), state.ackTimeoutNanos())) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        while (reader.loadNextBatch()) {
          if (builder == null) {
            builder = FlightTable.builder(root.getSchema(), reader);
          }
          builder.add(root);
        }
        if (builder == null) {
          builder = FlightTable.builder(root.getSchema(), reader);
        }
        state.tables().publish(name, builder.build());
        builder = null;
        out.completed();
      } catch (IOException | RuntimeException e) {
        if (builder != null) {
          builder.close();
        }
        if (e instanceof FlightRuntimeException f) {
          throw f;
        }
        out.error(CallStatus.INVALID_ARGUMENT.withDescription("data-plane put failed: " + e.getMessage())
            .withCause(e).toRuntimeException());
      }
    }
  }
}
