package io.sluice.transport.tcp;

import io.sluice.transport.ProtocolException;

/** Frame types of the tcp/shm wire protocol, with their byte ids. See {@link FrameHeader}. */
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
  /** Client to server: asks where the peer's shared memory lives. */
  SHM_HELLO(10),
  /** Server to client: shm directory and proof token. */
  SHM_INFO(11),
  /** Client to server: asks for the backing file of a key. */
  SHM_OPEN(12),
  /** Server to client: backing file path, offset, length, revocation slot. */
  SHM_REGION(13),
  /**
   * Client to server: set-up of a provider built on this transport (verbs: the peer's RDMA
   * address, admission of a queue pair, key checks). Served by the transport's {@link
   * ProviderSetup}, never by the application's handler; the payload belongs to that provider.
   */
  VERBS_SETUP(14),
  /** Server to client: the answer to a VERBS_SETUP (or an ERROR frame). */
  VERBS_SETUP_REPLY(15);

  private static final FrameType[] BY_ID = new FrameType[16];

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
