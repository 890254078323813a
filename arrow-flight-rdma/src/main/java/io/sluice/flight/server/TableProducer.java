package io.sluice.flight.server;

import io.sluice.flight.ServerAction;
import io.sluice.flight.protocol.DataPlaneProtocol;
import io.sluice.flight.protocol.DataPlaneOffer;
import io.sluice.flight.table.FlightTable;
import io.sluice.flight.table.TableRegistry;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.BackpressureStrategy;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;

/**
 * The Flight producer of a {@link io.sluice.flight.SluiceFlightServer}: tables by name, served to
 * every Flight client as Flight defines it, plus the data plane for clients that negotiate it.
 *
 * <ul>
 *   <li>ListFlights / GetFlightInfo: one FlightInfo per table, descriptor path {@code [name]}, one
 *       endpoint (this server) whose ticket opens the table.
 *   <li>DoGet: the table as an ordinary Flight stream. DoPut to path {@code [name]}: stores that
 *       table when the put completes, replacing one an earlier put stored (never one the
 *       application published).
 *   <li>DoExchange: with a data-plane command, a data-plane stream; with a path {@code [name]},
 *       the table is sent back as with DoGet (the client's side may stay empty).
 *   <li>DoAction {@value DataPlaneOffer#ACTION}: where this server's transport listens and the
 *       identity key it proves, for clients that can use the data plane, and how many data-plane
 *       gets one client may hold; signed under the secret for the client's nonce and audience.
 * </ul>
 *
 * <p>Thread safe; every call runs on a gRPC executor thread.
 */
final class TableProducer implements FlightProducer {
  private final ServerState state;
  private final List<Location> locations;
  private final Map<String, ServerAction> actions;

  TableProducer(ServerState state, List<Location> locations, Map<String, ServerAction> actions) {
    this.state = state;
    this.locations = locations;
    this.actions = actions;
  }

  @Override
  public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
    serve(context, nameOf(ticket), listener);
  }

  @Override
  public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
    for (String name : state.tables().names()) {
      state.tables().acquire(name).ifPresent(t -> {
        try {
          listener.onNext(info(name, t));
        } finally {
          t.release();
        }
      });
    }
    listener.onCompleted();
  }

  @Override
  public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
    String name = TableRegistry.nameOf(descriptor).orElseThrow(() -> CallStatus.NOT_FOUND
        .withDescription("this server names tables by a path of one element").toRuntimeException());
    FlightTable t = state.tables().require(name);
    try {
      return info(name, t);
    } finally {
      t.release();
    }
  }

  @Override
  public Runnable acceptPut(CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
    return PlainStreams.put(state, flightStream, ackStream);
  }

  @Override
  public void doExchange(CallContext context, FlightStream reader, ServerStreamListener writer) {
    FlightDescriptor d = reader.getDescriptor();
    if (d.isCommand() && DataPlaneProtocol.isCommand(d.getCommand())) {
      DataPlaneStreams.open(state, d.getCommand(), reader, writer);
      return;
    }
    serve(context, TableRegistry.nameOf(d).orElseThrow(() -> CallStatus.INVALID_ARGUMENT
        .withDescription("DoExchange takes a data-plane command or a table's path").toRuntimeException()), writer);
  }

  /**
   * Sends table {@code name} as an ordinary Flight stream, from a thread of the server's own: the
   * stream waits for gRPC's "ready" callback, which gRPC delivers on the thread of this call.
   */
  private void serve(CallContext context, String name, ServerStreamListener listener) {
    FlightTable table = state.tables().require(name);
    BackpressureStrategy backpressure = new BackpressureStrategy.CallbackBackpressureStrategy();
    backpressure.register(listener);
    try {
      // A call whose client the server could not learn counts against the total only.
      state.plainStreams().execute(PeerAddress.current(), () -> {
        try {
          PlainStreams.get(state, table, listener, backpressure);
        } finally {
          table.release();
        }
      });
    } catch (RuntimeException e) {
      table.release();
      throw e;
    }
  }

  @Override
  public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
    ServerAction own = actions.get(action.getType());
    if (own != null) {
      byte[] result;
      try {
        result = own.handle(action.getBody() == null ? new byte[0] : action.getBody());
      } catch (SecurityException e) {
        listener.onError(CallStatus.UNAUTHORIZED.withDescription(action.getType() + " refused: " + e.getMessage())
            .toRuntimeException());
        return;
      } catch (RuntimeException e) {
        listener.onError(CallStatus.INTERNAL.withDescription(action.getType() + " failed: " + e).withCause(e)
            .toRuntimeException());
        return;
      }
      listener.onNext(new Result(result));
      listener.onCompleted();
      return;
    }
    if (!action.getType().equals(DataPlaneOffer.ACTION)) {
      listener.onError(CallStatus.UNIMPLEMENTED.withDescription("unknown action " + action.getType())
          .toRuntimeException());
      return;
    }
    byte[] answer;
    if (state.transport().isEmpty()) {
      if (state.offerKey().isEmpty()) {
        listener.onError(CallStatus.UNAVAILABLE.withDescription("this server has no data plane").toRuntimeException());
        return;
      }
      answer = DataPlaneOffer.refusal("this server's transport did not start");
    } else {
      var t = state.transport().get();
      answer = new DataPlaneOffer(t.localAddress(), t.identityKey(), t.provider(), state.dataPlaneGets().perClient())
          .encode();
    }
    listener.onNext(new Result(answer));
    // Signed under the call-token key over the client's nonce, the audience its token named (this
    // server, as the client knows it) and the answer, so that nobody on the path can answer "no
    // data plane" in the server's name, point the client at another node of the cluster, nor relay
    // another server's answer. A client takes no answer unsigned.
    byte[] nonce = action.getBody();
    String audience = context.peerIdentity();
    if (state.offerKey().isPresent() && nonce != null && nonce.length > 0 && audience != null) {
      listener.onNext(new Result(state.offerKey().get().sign(DataPlaneOffer.SIGNATURE_LABEL, nonce,
          audience.getBytes(java.nio.charset.StandardCharsets.UTF_8), answer)));
    }
    listener.onCompleted();
  }

  @Override
  public void listActions(CallContext context, StreamListener<ActionType> listener) {
    listener.onNext(new ActionType(DataPlaneOffer.ACTION,
        "Where this server's Sluice transport listens, for clients that READ batch bodies"));
    actions.forEach((type, a) -> listener.onNext(new ActionType(type, a.description())));
    listener.onCompleted();
  }

  /** The table a ticket of this server names. */
  static String nameOf(Ticket ticket) {
    return TableRegistry.nameOf(ticket).orElseThrow(() -> CallStatus.NOT_FOUND
        .withDescription("not a ticket of this server").toRuntimeException());
  }

  private FlightInfo info(String name, FlightTable t) {
    FlightEndpoint endpoint = new FlightEndpoint(TableRegistry.ticket(name), locations.toArray(Location[]::new));
    return new FlightInfo(t.schema(), TableRegistry.descriptor(name), List.of(endpoint), t.bodyBytes(), t.rows());
  }
}
