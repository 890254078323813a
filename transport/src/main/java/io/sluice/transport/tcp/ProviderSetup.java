package io.sluice.transport.tcp;

import io.sluice.transport.TransportException;
import java.nio.ByteBuffer;

/**
 * The hook through which a provider built on the tcp transport (verbs) sets up its own data
 * path: the tcp transport authenticates peers and carries messages, and hands every
 * VERBS_SETUP frame of an authenticated peer to this service instead of the application's
 * {@link io.sluice.transport.MessageHandler}. The payload layout belongs to the provider;
 * the tcp transport only bounds it by {@link Frames#MAX_CONTROL_PAYLOAD}.
 *
 * <p>Install one with {@link TcpTransportProvider#openCarrier}; send requests with {@link
 * TcpTransportProvider#setupRequest}. Called on a selector thread that serves many
 * connections, so it must answer quickly and must be thread safe.
 */
@FunctionalInterface
public interface ProviderSetup {
  /**
   * Answers one request.
   *
   * @param peerNode the authenticated peer's node id
   * @param peerAddress the IP address the peer's tcp connection comes from
   * @param request the payload; valid only during the call
   * @return the reply payload, at most {@link Frames#MAX_CONTROL_PAYLOAD} bytes
   * @throws TransportException to answer with an ERROR frame of the matching code (an
   *     unknown or revoked key, for instance), which the requester sees as the same type
   */
  ByteBuffer serve(long peerNode, java.net.InetAddress peerAddress, ByteBuffer request) throws TransportException;
}
