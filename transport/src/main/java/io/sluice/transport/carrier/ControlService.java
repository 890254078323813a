package io.sluice.transport.carrier;

import io.sluice.transport.TransportException;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * A provider's own control requests, carried by the carrier: the carrier authenticates peers,
 * and hands every CONTROL frame of an authenticated peer that names this service's id (see
 * {@link ControlServices}) to it instead of the application's {@link
 * io.sluice.transport.MessageHandler}. A data path sets itself up this way (shared memory tells
 * a same-host peer where a region's file is; verbs exchanges RDMA addresses and admits queue
 * pairs). The request and reply layouts belong to the service; the carrier bounds both by
 * {@code Frames.MAX_CONTROL_PAYLOAD}. Requests are sent with {@link CarrierConnection#control}.
 *
 * <p>Called on a selector thread that serves many connections, so it must answer quickly, unless
 * it says it {@link #mayBlock} (work with a device, for instance): then its requests run on the
 * carrier's set-up threads ({@link Carrier#SETUP_THREADS}, not the message handlers), at most {@link ServerSession#MAX_CONTROLS_IN_FLIGHT} per connection
 * (reading from that peer pauses beyond). Must be thread safe.
 */
@FunctionalInterface
public interface ControlService {
  /**
   * Answers one request.
   *
   * @param peerNode the authenticated peer's node id
   * @param peerAddress the IP address the peer's connection comes from
   * @param request the service's request; valid only during the call
   * @return the reply, at most {@code Frames.MAX_CONTROL_PAYLOAD} bytes
   * @throws TransportException to answer with an ERROR frame of the matching code (an unknown or
   *     revoked key, for instance), which the requester sees as the same type
   */
  ByteBuffer serve(long peerNode, InetAddress peerAddress, ByteBuffer request) throws TransportException;

  /**
   * Whether {@link #serve} may take long (registering memory with a device, say): if so it runs
   * off the selector thread, so that one peer's set-up never stalls the other connections that
   * thread serves. False by default.
   */
  default boolean mayBlock() {
    return false;
  }
}
