package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import io.sluice.flight.plane.BodyReceiver;
import io.sluice.flight.plane.BoundedNext;
import io.sluice.flight.plane.FrameLink;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.SchemaFrame;
import io.sluice.flight.protocol.IpcBodies;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenGet;
import io.sluice.flight.protocol.DataPlaneProtocol.OpenPut;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.RegisteredBodies;
import io.sluice.flight.table.TableRegistry;
import io.sluice.transport.Connection;
import io.sluice.transport.ReaderGrant;
import io.sluice.transport.Transport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of data-plane streams, opened by a DoExchange whose command is a {@link
 * DataPlaneProtocol} command carrying a grant. Get: the table's bodies already lie in registered
 * memory that no peer may READ; the stream lets the granted peer READ it, sends the schema on the
 * call, and from then on the reader pulls body announcements (and acknowledges) over its
 * authenticated transport connection ({@link ServedGet}); the permission is withdrawn when the
 * client has acknowledged everything and half-closed the call (a reader on shm does so once it
 * holds no view of the table's memory), cancels, dies or misses the acknowledgement deadline. Nothing is copied or registered per stream. Put:
 * the server connects to the client's transport, checks that it is the granted peer, READs the
 * bodies into its own registered memory and stores the table as it landed.
 *
 * <p>Stateless; a get runs on a thread of the server's bounded get pool, a put on its gRPC thread.
 */
final class DataPlaneStreams {
  private static final Logger LOG = LoggerFactory.getLogger(DataPlaneStreams.class);

  private DataPlaneStreams() {}

  static void open(ServerState state, byte[] command, FlightStream in, ServerStreamListener out) {
    Transport transport = state.transport().orElseThrow(() -> CallStatus.UNAVAILABLE
        .withDescription("this server has no data plane").toRuntimeException());
    DataPlaneProtocol.Command open;
    try {
      open = DataPlaneProtocol.decodeCommand(command);
    } catch (IllegalArgumentException e) {
      throw CallStatus.INVALID_ARGUMENT.withDescription("bad data-plane command: " + e.getMessage()).toRuntimeException();
    }
    Optional<Grants.Holder> redeemed = state.grants().redeem(open.grant());
    if (redeemed.isEmpty()) {
      state.metrics().grantRefused();
      throw CallStatus.UNAUTHENTICATED.withDescription("data-plane grant unknown, already used or expired")
          .toRuntimeException();
    }
    Grants.Holder holder = redeemed.get();
    long peer = holder.node();
    if (open instanceof OpenGet g) {
      // A get waits for its reader's pulls until it ends or the deadline passes: it runs on the
      // bounded get threads, within the shares of its client (the granted transport node) and of
      // the host that node's transport connection comes from, never on a gRPC thread of its own.
      Requester who = new Requester("transport node " + Long.toHexString(peer), holder.host());
      state.dataPlaneGets().execute(Optional.of(who), () -> {
        try {
          get(state, transport, holder, g, in, out);
        } catch (FlightRuntimeException e) {
          out.error(e); // off the gRPC thread, an error reaches the reader only this way
        }
      });
      return;
    }
    state.activeStreams().incrementAndGet();
    try {
      put(state, transport, holder, (OpenPut) open, in, out);
    } finally {
      state.activeStreams().decrementAndGet();
    }
  }

  private static void get(ServerState state, Transport transport, Grants.Holder holder, OpenGet open,
      FlightStream in, ServerStreamListener out) {
    long peer = holder.node();
    String name = TableProducer.nameOf(new Ticket(open.ticket()));
    FlightTable table = state.tables().require(name);
    FrameLink link = new FrameLink(in, out, state.allocator());
    List<ReaderGrant> grants = List.of();
    boolean granted = false;
    long bodyBytes = 0;
    boolean served = false;
    boolean completed = false;
    FlightRuntimeException failure = null;
    state.activeStreams().incrementAndGet();
    try {
      RegisteredBodies bodies = table.registered().orElseThrow(
          () -> new IllegalStateException("table '" + name + "' was published without the data plane"));
      List<BodyFrame> frames = new ArrayList<>();
      for (RegisteredBodies.Body b : bodies.dictionaries()) {
        frames.add(new BodyFrame(true, frames.size(), b.metadata(), b.ref(), b.crc32c()));
      }
      for (RegisteredBodies.Body b : bodies.batches()) {
        frames.add(new BodyFrame(false, frames.size(), b.metadata(), b.ref(), b.crc32c()));
      }
      for (BodyFrame f : frames) {
        bodyBytes += f.body().length();
      }
      ServedGet get = new ServedGet(peer, frames, state.windowBytes(), state.ackTimeoutNanos());
      grants = bodies.allow(peer);
      granted = true;
      state.activeGrants().incrementAndGet();
      // The grants hold the peer's node id from here on, so the key the transport knows for it
      // can no longer change: it must be the key the grant was issued to, or the node id now
      // names another key (the holder's connections all closed, and another key with its id came).
      if (!transport.peerIdentityKey(peer).map(holder::provedBy).orElse(false)) {
        failure = CallStatus.UNAUTHENTICATED.withDescription("the data-plane grant's peer is no longer connected with"
            + " the identity key it was issued to").toRuntimeException();
        return;
      }
      out.setOnCancelHandler(() -> get.cancel(new CancellationException("the client cancelled the stream")));
      if (out.isCancelled()) {
        // Cancelled before the handler was set (a reader that gave up as soon as it asked): Flight
        // runs no handler for that, and the get would otherwise wait out its deadline.
        get.cancel(new CancellationException("the client cancelled the stream"));
      }
      // The reader pulls announcements over its transport connection, naming the stream by its grant.
      state.gets().add(open.grant(), get);
      try {
        link.send(DataPlaneProtocol.encode(new SchemaFrame(IpcBodies.schemaMetadata(table.messageSchema()))));
        get.awaitDone();
        served = true;
      } finally {
        state.gets().remove(open.grant());
      }
      // On shm the reader may hold views of the table's memory past the last body: the table and
      // the grant stay until it half-closes (it has released them), the call ends (it died), or
      // the acknowledgement deadline passes (then it loses them, and the call ends).
      completed = readerEnded(in, state.ackTimeoutNanos());
    } catch (TimeoutException e) {
      LOG.info("Data-plane stream of '{}' to peer {} timed out: {}", name, Long.toHexString(peer), e.getMessage());
      failure = CallStatus.TIMED_OUT.withDescription(e.getMessage()).toRuntimeException();
    } catch (CancellationException e) {
      failure = CallStatus.CANCELLED.withDescription(e.getMessage()).toRuntimeException();
    } catch (RuntimeException e) {
      LOG.warn("Data-plane stream of '{}' failed", name, e);
      failure = CallStatus.INTERNAL.withDescription("serving the stream failed: " + e).withCause(e).toRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = CallStatus.CANCELLED.withDescription("server shutting down").toRuntimeException();
    } catch (Error e) {
      LOG.error("Data-plane stream of '{}' failed", name, e);
      failure = CallStatus.INTERNAL.withDescription("serving the stream failed: " + e).toRuntimeException();
      throw e;
    } finally {
      // The reader hears how its stream ended only after the stream has let go of everything: a
      // reader that has seen the end can READ nothing of the table any more, and the server's
      // counts (grants, streams, gets) already say so when anyone looks.
      try {
        state.metrics().dataPlaneGet(bodyBytes, served);
        // From here the client's READs of this table find the keys unknown.
        if (granted) {
          grants.forEach(ReaderGrant::close);
          state.activeGrants().decrementAndGet();
        }
        table.release();
        state.activeStreams().decrementAndGet();
      } finally {
        if (failure != null) {
          out.error(failure);
        } else if (completed) {
          out.completed();
        }
      }
    }
  }

  /**
   * Waits at most {@code timeoutNanos} for the reader's half-close: true when it came, false when
   * the reader cancelled or went away instead (the call is over either way).
   *
   * @throws IllegalArgumentException if the reader sent a message
   * @throws TimeoutException if the reader did neither in time
   */
  private static boolean readerEnded(FlightStream in, long timeoutNanos) throws TimeoutException {
    try {
      if (BoundedNext.next(in, timeoutNanos)) {
        throw new IllegalArgumentException("the reader sent a message on a get");
      }
      return true;
    } catch (TimeoutException e) {
      TimeoutException t = new TimeoutException("the reader took every body but did not end the call within "
          + timeoutNanos / 1_000_000 + " ms (" + FlightOption.ACK_TIMEOUT_MS.key() + "); its access is withdrawn");
      t.initCause(e);
      throw t;
    } catch (FlightRuntimeException e) {
      return false;
    }
  }

  private static void put(ServerState state, Transport transport, Grants.Holder holder, OpenPut open,
      FlightStream in, ServerStreamListener out) {
    state.checkPutsAllowed();
    String name;
    try {
      name = TableRegistry.nameOf(FlightDescriptor.deserialize(ByteBuffer.wrap(open.descriptor())))
          .orElseThrow(() -> new IllegalArgumentException("a put needs a path descriptor with the table's name"));
    } catch (IOException | RuntimeException e) {
      throw CallStatus.INVALID_ARGUMENT.withDescription("bad put descriptor: " + e.getMessage()).toRuntimeException();
    }
    state.tables().checkPutMayStore(name);
    try (PutBudget.Put budget = state.putBudget().begin(name)) {
      put(state, transport, holder, open, name, budget, in, out);
    }
  }

  private static void put(ServerState state, Transport transport, Grants.Holder holder, OpenPut open, String name,
      PutBudget.Put budget, FlightStream in, ServerStreamListener out) {
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
      if (!holder.provedBy(connection.peerIdentityKey())) {
        throw CallStatus.UNAUTHENTICATED.withDescription(
            "the transport at " + open.readFrom() + " is not the peer the grant was issued to").toRuntimeException();
      }
      FrameLink link = FrameLink.serverSide(in, out, state.allocator(), state.ackTimeoutNanos());
      try {
        FlightTable stored = new BodyReceiver(link, connection, transport, state.readChunkBytes(), state.window(),
            state.ackTimeoutNanos()).receive(state.allocator(), bytes -> state.checkPutSize(budget, bytes));
        state.storePut(name, budget, stored); // already in registered memory: served as it is
        state.metrics().dataPlanePut();
        out.completed();
      } catch (IOException | RuntimeException e) {
        if (e instanceof FlightRuntimeException f) {
          throw f;
        }
        // Thrown, not sent from here: the writer hears of the failure once the put has given back
        // its connection and its reservation of the put budget, so a put it retries at once fits.
        throw CallStatus.INVALID_ARGUMENT.withDescription("data-plane put failed: " + e.getMessage())
            .withCause(e).toRuntimeException();
      }
    }
  }
}
