package io.sluice.transport.verbs.provider;

import io.sluice.transport.ProtocolException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * The one definition of the verbs provider's set-up payloads: the requests and replies of its
 * control service, carried by the carrier's CONTROL / CONTROL_REPLY frames under {@link
 * #SERVICE}. Big-endian. A request starts with a u8 operation:
 *
 * <pre>
 *   NODE_INFO (1)  request: nothing more        reply: address of the peer's RDMA listener
 *   ADMIT     (2)  request: u8 purpose, address (source)    reply: empty
 *                  purpose: READS (1) a queue pair the requester READs on, MESSAGES (2) one
 *                  that carries its requests (see the channel package)
 *   KEY       (3)  request: i64 key             reply: i64 address, i64 length, i32 rkey
 *   address = u8 n (4 or 16), n bytes of IP address, u16 port
 * </pre>
 *
 * A refused request (unknown or revoked key) is answered with an ERROR frame instead. Decoders
 * reject anything that is not exactly well formed. Stateless.
 */
final class SetupMessages {
  /** The control service id of verbs set-up on the carrier. */
  static final int SERVICE = 2;
  static final int KEY_INFO_LENGTH = 8 + 8 + 4;

  /** What a request asks for; {@link #id} is its first byte. */
  enum Operation {
    NODE_INFO(1),
    ADMIT(2),
    KEY(3);

    final byte id;

    Operation(int id) {
      this.id = (byte) id;
    }
  }

  /** What a queue pair an ADMIT request announces is for; {@link #id} is its byte on the wire. */
  enum Purpose {
    /** The requester READs on it. */
    READS(1),
    /** It carries the requester's requests (see the channel package). */
    MESSAGES(2);

    final byte id;

    Purpose(int id) {
      this.id = (byte) id;
    }
  }

  /** A live registration as its owner reports it. */
  record KeyInfo(long address, long length, int rkey) {}

  private SetupMessages() {}

  static ByteBuffer nodeInfoRequest() {
    return ByteBuffer.allocate(1).put(Operation.NODE_INFO.id).flip();
  }

  static ByteBuffer admitRequest(Purpose purpose, InetSocketAddress source) {
    byte[] ip = source.getAddress().getAddress();
    return ByteBuffer.allocate(1 + 1 + 1 + ip.length + 2).put(Operation.ADMIT.id).put(purpose.id)
        .put((byte) ip.length).put(ip).putShort((short) source.getPort()).flip();
  }

  /** Reads an ADMIT purpose; advances past it. */
  static Purpose purpose(ByteBuffer in) throws ProtocolException {
    if (!in.hasRemaining()) {
      throw new ProtocolException("ADMIT request without a purpose");
    }
    byte id = in.get();
    for (Purpose purpose : Purpose.values()) {
      if (purpose.id == id) {
        return purpose;
      }
    }
    throw new ProtocolException("unknown ADMIT purpose " + (id & 0xff));
  }

  static ByteBuffer keyRequest(long key) {
    return ByteBuffer.allocate(1 + 8).put(Operation.KEY.id).putLong(key).flip();
  }

  static ByteBuffer addressReply(InetSocketAddress address) {
    byte[] ip = address.getAddress().getAddress();
    return ByteBuffer.allocate(1 + ip.length + 2).put((byte) ip.length).put(ip)
        .putShort((short) address.getPort()).flip();
  }

  static ByteBuffer keyReply(KeyInfo info) {
    return ByteBuffer.allocate(KEY_INFO_LENGTH).putLong(info.address()).putLong(info.length())
        .putInt(info.rkey()).flip();
  }

  /** The operation of a request; advances past it. */
  static Operation operation(ByteBuffer request) throws ProtocolException {
    if (!request.hasRemaining()) {
      throw new ProtocolException("empty verbs set-up request");
    }
    byte id = request.get();
    for (Operation op : Operation.values()) {
      if (op.id == id) {
        return op;
      }
    }
    throw new ProtocolException("unknown verbs set-up operation " + (id & 0xff));
  }

  /** Reads an address that must be all that remains. */
  static InetSocketAddress address(ByteBuffer in) throws ProtocolException {
    if (in.remaining() < 1) {
      throw new ProtocolException("verbs set-up address truncated");
    }
    int n = in.get() & 0xff;
    if ((n != 4 && n != 16) || in.remaining() != n + 2) {
      throw new ProtocolException("verbs set-up address of " + n + " bytes with " + in.remaining() + " bytes left");
    }
    byte[] ip = new byte[n];
    in.get(ip);
    int port = in.getShort() & 0xffff;
    try {
      return new InetSocketAddress(InetAddress.getByAddress(ip), port);
    } catch (UnknownHostException e) {
      throw new ProtocolException("bad address in a verbs set-up message: " + e.getMessage());
    }
  }

  /** Reads a key that must be all that remains. */
  static long key(ByteBuffer in) throws ProtocolException {
    expectRemaining(in, 8, "KEY request");
    return in.getLong();
  }

  static KeyInfo keyInfo(ByteBuffer in) throws ProtocolException {
    expectRemaining(in, KEY_INFO_LENGTH, "KEY reply");
    KeyInfo info = new KeyInfo(in.getLong(), in.getLong(), in.getInt());
    if (info.length() < 0) {
      throw new ProtocolException("KEY reply with negative length");
    }
    return info;
  }

  static void expectEmpty(ByteBuffer in, String what) throws ProtocolException {
    expectRemaining(in, 0, what);
  }

  private static void expectRemaining(ByteBuffer in, int n, String what) throws ProtocolException {
    if (in.remaining() != n) {
      throw new ProtocolException(what + " has " + in.remaining() + " bytes, expected " + n);
    }
  }
}
