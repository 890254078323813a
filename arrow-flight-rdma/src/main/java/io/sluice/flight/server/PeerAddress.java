package io.sluice.flight.server;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.SocketAddress;
import java.util.Optional;

/**
 * Who a Flight call comes from, for the shares of the server's stream threads: the client is the
 * peer's address and port, that is one gRPC connection (one Flight client), and its host is that
 * address ({@link HostKey}). gRPC knows it, Flight's producer API does not: this interceptor,
 * installed on the gRPC server builder, puts it in the call's gRPC {@link Context}, which is
 * attached while the service's handlers run, so the producer reads it with {@link #current()} on
 * the thread gRPC calls it on. (A header is no way to carry it: Flight's middleware runs before
 * interceptors added to the builder, and a client may send any header.) Every token holder
 * presents the same secret, so the connection is the finest identity a server has, and the host
 * the one a client cannot multiply by opening connections.
 *
 * <p>Stateless and thread safe.
 */
final class PeerAddress implements ServerInterceptor {
  private static final Context.Key<Requester> PEER = Context.key("sluice-peer-address");

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
    if (remote == null) {
      return next.startCall(call, headers);
    }
    Requester peer = new Requester(remote.toString(), HostKey.of(remote));
    return Contexts.interceptCall(Context.current().withValue(PEER, peer), call, headers, next);
  }

  /** The client of the call being served on this thread, and its host, when gRPC told them. */
  static Optional<Requester> current() {
    return Optional.ofNullable(PEER.get());
  }
}
