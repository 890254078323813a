package io.sluice.flight.server;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.SocketAddress;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightProducer.CallContext;
import org.apache.arrow.flight.FlightServerMiddleware;
import org.apache.arrow.flight.RequestContext;

/**
 * Who a Flight call comes from, for the per-client shares of the server's stream threads: the
 * peer's address and port, that is one gRPC connection (one Flight client). gRPC knows it, Flight's
 * producer API does not: a gRPC interceptor writes it into a header of the call (replacing any
 * header of that name the client sent), and a Flight middleware hands it to the producer. Every
 * token holder presents the same secret, so the connection is the finest identity a server has.
 *
 * <p>Stateless and thread safe.
 */
final class PeerAddress implements ServerInterceptor {
  static final FlightServerMiddleware.Key<Middleware> KEY = FlightServerMiddleware.Key.of("sluice-peer-address");
  private static final String HEADER = "x-sluice-peer-address";
  private static final Metadata.Key<String> METADATA = Metadata.Key.of(HEADER, Metadata.ASCII_STRING_MARSHALLER);

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    headers.removeAll(METADATA);
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    if (remote != null) {
      headers.put(METADATA, remote.toString());
    }
    return next.startCall(call, headers);
  }

  /** The client of {@code context}'s call, when gRPC told it. */
  static java.util.Optional<String> of(CallContext context) {
    Middleware m = context.getMiddleware(KEY);
    return m == null || m.address == null ? java.util.Optional.empty() : java.util.Optional.of(m.address);
  }

  /** Carries the address from the call's headers to the producer. */
  static final class Middleware implements FlightServerMiddleware {
    private final String address;

    Middleware(String address) {
      this.address = address;
    }

    @Override
    public void onBeforeSendingHeaders(CallHeaders outgoingHeaders) {}

    @Override
    public void onCallCompleted(CallStatus status) {}

    @Override
    public void onCallErrored(Throwable err) {}
  }

  static final FlightServerMiddleware.Factory<Middleware> FACTORY =
      (CallInfo info, CallHeaders incoming, RequestContext context) -> new Middleware(incoming.get(HEADER));
}
