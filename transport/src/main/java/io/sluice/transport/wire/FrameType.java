package io.sluice.transport.wire;

import io.sluice.transport.ProtocolException;

/**
 * Frame types of the carrier's wire protocol. On the wire a type is its position from 1 ({@link
 * WireIds}): HELLO is 1, CONTROL_REPLY 11; new types are appended. See {@link FrameHeader}.
 */
public enum FrameType {
  /** Client to server: version, node id, flags, nonce, ephemeral and identity keys ({@link Frames.Hello}). */
  HELLO,
  /** Server to client: the same fields for the server ({@link Frames.Challenge}). */
  CHALLENGE,
  /** Client to server: the client's finished value and signature ({@link Frames.Auth}). */
  AUTH,
  /** Server to client, the first protected frame: the server's signature; the connection is usable. */
  AUTH_OK,
  /** Client to server: key, offset, length of a one-sided READ. */
  READ_REQUEST,
  /** Server to client: the READ's bytes, exactly the requested length. */
  READ_RESPONSE,
  /** Client to server: a message for the peer's handler. */
  REQUEST,
  /** Server to client: the handler's response. */
  RESPONSE,
  /** Either way: an error code and text, for the correlation id in the header. */
  ERROR,
  /**
   * Client to server: a request for a provider's control service (a data path's set-up: where a
   * same-host peer's shared memory lives, the RDMA address of a peer, admission of a queue pair,
   * key look-ups). Served by the {@code ControlService} registered under the service id the
   * payload starts with, never by the application's handler; see {@link Frames.Control}.
   */
  CONTROL,
  /** Server to client: a control service's answer to a CONTROL (or an ERROR frame). */
  CONTROL_REPLY;

  private static final FrameType[] VALUES = values();

  public byte id() {
    return WireIds.of(this);
  }

  public static FrameType fromId(byte id) throws ProtocolException {
    return WireIds.decode(VALUES, id, "frame type");
  }
}
