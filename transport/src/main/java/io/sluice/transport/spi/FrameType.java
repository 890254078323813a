package io.sluice.transport.spi;

import io.sluice.transport.ProtocolException;

/** Frame types of the carrier's wire protocol, with their byte ids. See {@link FrameHeader}. */
public enum FrameType {
  /** Client to server: protocol version, node id, client nonce. */
  HELLO(1),
  /** Server to client: version, node id, server nonce, server proof. */
  CHALLENGE(2),
  /** Client to server: client proof. */
  AUTH(3),
  /** Server to client: authentication accepted; the connection is usable. */
  AUTH_OK(4),
  /** Client to server: key, offset, length of a one-sided READ. */
  READ_REQUEST(5),
  /** Server to client: the READ's bytes, exactly the requested length. */
  READ_RESPONSE(6),
  /** Client to server: a message for the peer's handler. */
  REQUEST(7),
  /** Server to client: the handler's response. */
  RESPONSE(8),
  /** Either way: an error code and text, for the correlation id in the header. */
  ERROR(9),
  /**
   * Client to server: a request for a provider's control service (a data path's set-up: where a
   * same-host peer's shared memory lives, the RDMA address of a peer, admission of a queue pair,
   * key look-ups). Served by the {@link ControlService} registered under the service id the
   * payload starts with, never by the application's handler; see {@link Frames.Control}.
   */
  CONTROL(10),
  /** Server to client: a control service's answer to a CONTROL (or an ERROR frame). */
  CONTROL_REPLY(11);

  private static final FrameType[] BY_ID = new FrameType[12];

  static {
    for (FrameType t : values()) {
      BY_ID[t.id] = t;
    }
  }

  private final byte id;

  FrameType(int id) {
    this.id = (byte) id;
  }

  public byte id() {
    return id;
  }

  public static FrameType fromId(byte id) throws ProtocolException {
    int i = id & 0xff;
    FrameType t = i < BY_ID.length ? BY_ID[i] : null;
    if (t == null) {
      throw new ProtocolException("unknown frame type " + i);
    }
    return t;
  }
}
