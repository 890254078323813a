package io.sluice.flight.protocol;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The one definition of the data-plane wire format. Three carriers:
 *
 * <ul>
 *   <li>a <b>command</b>: the {@code FlightDescriptor} command of the DoExchange call that opens a
 *       data-plane stream ({@link OpenGet} or {@link OpenPut});
 *   <li><b>frames</b>: the {@code app_metadata} of the metadata-only Flight messages of that call
 *       ({@link SchemaFrame}, {@link BodyFrame} for dictionaries and record batches, {@link
 *       AckFrame});
 *   <li>the <b>grant</b> request and reply, sent over the authenticated transport connection:
 *       a grant is a single-use random token that ties the gRPC call to the transport peer that
 *       asked for it;
 *   <li>the <b>pull</b> request ({@link Pull}) and its reply ({@link Announcement}), also over
 *       the authenticated transport connection: a get's reader acknowledges the bodies it has
 *       and asks for the next ones, so batch announcements never travel on gRPC.
 * </ul>
 *
 * <p>Every body travels with the CRC32C its owner computed over it ({@link BodyFrame#crc32c()}):
 * the server's when the table was published or a put completed, the writer's when it staged a
 * put's body; whoever READs (or views) the body checks it before building a batch from it.
 *
 * <p>All integers are big-endian. Decoding checks every length against what remains and against
 * {@link #MAX_METADATA_BYTES}; a malformed input raises {@link IllegalArgumentException} with the
 * reason. {@link #VERSION} leads every command and the server's offer ({@link DataPlaneOffer}); a
 * peer of another version is refused by name (a server answers its command INVALID_ARGUMENT, a
 * client finds the offer unreadable and takes plain Flight). Stateless and thread safe.
 */
public final class DataPlaneProtocol {
  /** Prefix of every data-plane command; a descriptor command without it is not ours. */
  private static final byte[] COMMAND_MAGIC = "sluice-data-plane".getBytes(StandardCharsets.US_ASCII);
  /**
   * The data plane's version. 2: every body frame and announcement carries the body's CRC32C. 3:
   * the server's offer carries how many gets one client may hold at once. 4: the offer names the
   * transport's identity key instead of its node id, and a client takes it only signed.
   */
  public static final byte VERSION = 4;
  /** Length of a grant token. */
  public static final int GRANT_BYTES = 32;
  /** Largest IPC metadata (schema or batch header) a frame may carry. */
  public static final int MAX_METADATA_BYTES = 16 << 20;
  /** The transport request that asks the server for a grant. */
  private static final byte GRANT_REQUEST = 0x47;
  /** The transport request that acknowledges bodies of a get and asks for the next announcements. */
  private static final byte PULL_REQUEST = 0x50;
  /** The reply to a pull. */
  private static final byte ANNOUNCEMENT = 0x41;
  /** Most bodies one announcement may list. */
  public static final int MAX_ANNOUNCED_BODIES = 4096;

  private static final byte OPEN_GET = 1;
  private static final byte OPEN_PUT = 2;

  private static final byte SCHEMA = 1;
  private static final byte DICTIONARY = 2;
  private static final byte BATCH = 3;
  private static final byte ACK = 4;

  private DataPlaneProtocol() {}

  /** Where a body lies: a byte range of a registered region. */
  public record BodyRef(RemoteDescriptor region, long offset, long length) {
    public BodyRef {
      if (offset < 0 || length < 0 || offset + length > region.length() || offset + length < 0) {
        throw new IllegalArgumentException("body [" + offset + ", +" + length + ") outside a region of "
            + region.length() + " bytes");
      }
    }
  }

  /** A frame of a data-plane stream. */
  public sealed interface Frame permits SchemaFrame, BodyFrame, AckFrame {}

  /** The stream's schema, as Arrow IPC {@code Message} flatbuffer bytes. */
  public record SchemaFrame(byte[] metadata) implements Frame {}

  /**
   * A dictionary batch or record batch: its IPC {@code Message} flatbuffer bytes (field nodes,
   * buffer layout, compression), where its body lies and the CRC32C of the body's bytes as its
   * owner registered them. {@code sequence} numbers the stream's body frames from 0;
   * acknowledgements name it.
   *
   * <p>Encoded as: type (1: {@code 2} dictionary, {@code 3} record batch), sequence (8), metadata
   * length (4) and metadata, region ({@link RemoteDescriptor#ENCODED_LENGTH}), offset (8), length
   * (8), CRC32C (4).
   */
  public record BodyFrame(boolean dictionary, long sequence, byte[] metadata, BodyRef body, int crc32c)
      implements Frame {}

  /** The reader has the body of every frame up to and including {@code sequence}. */
  public record AckFrame(long sequence) implements Frame {}

  /** A command that opens a data-plane stream; each carries the grant of its caller. */
  public sealed interface Command permits OpenGet, OpenPut {
    byte[] grant();
  }

  /** Opens a DoGet-like stream of the table {@code ticket} names. */
  public record OpenGet(byte[] grant, byte[] ticket) implements Command {}

  /**
   * Opens a DoPut-like stream to the table {@code descriptor} (a serialized FlightDescriptor)
   * names; the server READs bodies from the client's transport at {@code readFrom}.
   */
  public record OpenPut(byte[] grant, byte[] descriptor, NodeAddress readFrom) implements Command {}

  // ---- commands

  public static boolean isCommand(byte[] command) {
    return command != null && command.length > COMMAND_MAGIC.length
        && Arrays.equals(command, 0, COMMAND_MAGIC.length, COMMAND_MAGIC, 0, COMMAND_MAGIC.length);
  }

  public static byte[] encode(OpenGet open) {
    ByteBuffer b = commandBuffer(OPEN_GET, GRANT_BYTES + 4 + open.ticket().length);
    b.put(checkGrant(open.grant()));
    putBytes(b, open.ticket());
    return b.array();
  }

  public static byte[] encode(OpenPut open) {
    byte[] host = open.readFrom().host().getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = commandBuffer(OPEN_PUT, GRANT_BYTES + 4 + open.descriptor().length + 4 + host.length + 4);
    b.put(checkGrant(open.grant()));
    putBytes(b, open.descriptor());
    putBytes(b, host);
    b.putInt(open.readFrom().port());
    return b.array();
  }

  /** Decodes a command: an {@link OpenGet} or an {@link OpenPut}. */
  public static Command decodeCommand(byte[] command) {
    if (!isCommand(command)) {
      throw new IllegalArgumentException("not a data-plane command");
    }
    ByteBuffer b = ByteBuffer.wrap(command, COMMAND_MAGIC.length, command.length - COMMAND_MAGIC.length);
    byte version = get(b);
    if (version != VERSION) {
      throw new IllegalArgumentException("data-plane version " + version + " from the client, this server speaks "
          + VERSION + " (client and server must be the same release)");
    }
    byte kind = get(b);
    byte[] grant = getFixed(b, GRANT_BYTES);
    Command open;
    if (kind == OPEN_GET) {
      open = new OpenGet(grant, getBytes(b, MAX_METADATA_BYTES));
    } else if (kind == OPEN_PUT) {
      byte[] descriptor = getBytes(b, MAX_METADATA_BYTES);
      String host = new String(getBytes(b, 1024), StandardCharsets.UTF_8);
      int port = getInt(b);
      try {
        open = new OpenPut(grant, descriptor, new NodeAddress(host, port));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("bad reply address in data-plane command: " + e.getMessage(), e);
      }
    } else {
      throw new IllegalArgumentException("unknown data-plane command kind " + kind);
    }
    expectEnd(b, "command");
    return open;
  }

  // ---- frames

  public static ByteBuffer encode(Frame frame) {
    if (frame instanceof SchemaFrame s) {
      return ByteBuffer.allocate(1 + 4 + s.metadata().length).put(SCHEMA).putInt(s.metadata().length)
          .put(s.metadata()).flip();
    }
    if (frame instanceof BodyFrame f) {
      ByteBuffer b = ByteBuffer.allocate(bodyFrameLength(f));
      putBodyFrame(b, f);
      return b.flip();
    }
    AckFrame a = (AckFrame) frame;
    return ByteBuffer.allocate(1 + 8).put(ACK).putLong(a.sequence()).flip();
  }

  /** Decodes one frame; the buffer must hold exactly one. */
  public static Frame decodeFrame(ByteBuffer in) {
    ByteBuffer b = in.duplicate();
    byte type = get(b);
    Frame f;
    switch (type) {
      case SCHEMA -> f = new SchemaFrame(getBytes(b, MAX_METADATA_BYTES));
      case DICTIONARY, BATCH -> {
        long sequence = getLong(b);
        if (sequence < 0) {
          throw new IllegalArgumentException("negative frame sequence " + sequence);
        }
        byte[] metadata = getBytes(b, MAX_METADATA_BYTES);
        need(b, RemoteDescriptor.ENCODED_LENGTH + 16 + 4);
        RemoteDescriptor region = RemoteDescriptor.decode(b);
        BodyRef body = new BodyRef(region, b.getLong(), b.getLong());
        f = new BodyFrame(type == DICTIONARY, sequence, metadata, body, b.getInt());
      }
      case ACK -> f = new AckFrame(getLong(b));
      default -> throw new IllegalArgumentException("unknown data-plane frame type " + type);
    }
    expectEnd(b, "frame");
    return f;
  }

  // ---- pulls over the transport

  /**
   * A get's reader, identified by its stream's grant, has READ the first {@code consumed} bodies
   * (a cumulative acknowledgement) and asks for announcements of up to {@code maxBodies} more;
   * with {@code stop}, it wants no more bodies (it closed the stream early, keeping what it has).
   */
  public record Pull(byte[] grant, long consumed, int maxBodies, boolean stop) {
    public Pull(byte[] grant, long consumed, int maxBodies) {
      this(grant, consumed, maxBodies, false);
    }

    public Pull {
      checkGrant(grant);
      if (consumed < 0 || maxBodies < 0 || maxBodies > MAX_ANNOUNCED_BODIES) {
        throw new IllegalArgumentException("pull of " + maxBodies + " bodies after " + consumed
            + " (at most " + MAX_ANNOUNCED_BODIES + ", neither negative)");
      }
    }
  }

  /**
   * The next bodies of a get, in sequence order; {@code last} says no body follows them. The
   * dictionary flag, sequence, metadata, body and CRC32C of each are those of a {@link BodyFrame}.
   *
   * <p>Encoded as: {@code 0x41} (1), last (1: 0 or 1), count (4, at most {@link
   * #MAX_ANNOUNCED_BODIES}), then per body its encoded {@link BodyFrame} length (4) and the frame.
   */
  public record Announcement(boolean last, java.util.List<BodyFrame> bodies) {}

  public static ByteBuffer encode(Pull pull) {
    return ByteBuffer.allocate(1 + GRANT_BYTES + 8 + 4 + 1).put(PULL_REQUEST).put(pull.grant())
        .putLong(pull.consumed()).putInt(pull.maxBodies()).put((byte) (pull.stop() ? 1 : 0)).flip();
  }

  public static boolean isPull(ByteBuffer request) {
    return request.remaining() > 0 && request.get(request.position()) == PULL_REQUEST;
  }

  public static Pull decodePull(ByteBuffer in) {
    ByteBuffer b = in.duplicate();
    if (get(b) != PULL_REQUEST) {
      throw new IllegalArgumentException("not a pull request");
    }
    byte[] grant = getFixed(b, GRANT_BYTES);
    long consumed = getLong(b);
    int maxBodies = getInt(b);
    byte stop = get(b);
    if (stop != 0 && stop != 1) {
      throw new IllegalArgumentException("pull flag " + stop);
    }
    Pull p = new Pull(grant, consumed, maxBodies, stop == 1);
    expectEnd(b, "pull request");
    return p;
  }

  /** The encoded length of an announcement of {@code bodies}. */
  public static int encodedLength(java.util.List<BodyFrame> bodies) {
    int n = 1 + 1 + 4;
    for (BodyFrame f : bodies) {
      n += 4 + bodyFrameLength(f);
    }
    return n;
  }

  public static ByteBuffer encode(Announcement a) {
    ByteBuffer b = ByteBuffer.allocate(encodedLength(a.bodies()));
    b.put(ANNOUNCEMENT).put((byte) (a.last() ? 1 : 0)).putInt(a.bodies().size());
    for (BodyFrame f : a.bodies()) {
      b.putInt(bodyFrameLength(f));
      putBodyFrame(b, f);
    }
    return b.flip();
  }

  public static Announcement decodeAnnouncement(ByteBuffer in) {
    ByteBuffer b = in.duplicate();
    if (get(b) != ANNOUNCEMENT) {
      throw new IllegalArgumentException("not an announcement");
    }
    byte last = get(b);
    if (last != 0 && last != 1) {
      throw new IllegalArgumentException("announcement flag " + last);
    }
    int count = getInt(b);
    if (count < 0 || count > MAX_ANNOUNCED_BODIES) {
      throw new IllegalArgumentException("announcement of " + count + " bodies (at most " + MAX_ANNOUNCED_BODIES + ")");
    }
    java.util.List<BodyFrame> bodies = new java.util.ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = getInt(b);
      if (length < 0 || length > b.remaining()) {
        throw new IllegalArgumentException("announced body of " + length + " bytes, " + b.remaining() + " remain");
      }
      ByteBuffer one = b.slice(b.position(), length);
      b.position(b.position() + length);
      if (!(decodeFrame(one) instanceof BodyFrame f)) {
        throw new IllegalArgumentException("an announcement lists a frame that is not a body");
      }
      bodies.add(f);
    }
    expectEnd(b, "announcement");
    return new Announcement(last == 1, java.util.List.copyOf(bodies));
  }

  // ---- grants over the transport

  /**
   * A peer's request for a grant. The server answers with the grant ({@link #grantReply}), or
   * refuses for load (the peer, or its host, holds its quota of unredeemed grants, or the server
   * holds all it keeps) with a {@link io.sluice.transport.ResourceExhaustedException}, ERROR code
   * EXHAUSTED on the wire: a client asks again later on that code alone.
   */
  public static java.nio.ByteBuffer grantRequest() {
    return ByteBuffer.allocate(1).put(GRANT_REQUEST).flip();
  }

  public static boolean isGrantRequest(ByteBuffer request) {
    return request.remaining() == 1 && request.get(request.position()) == GRANT_REQUEST;
  }

  /** The grant in a reply to {@link #grantRequest()}. */
  public static byte[] grantReply(ByteBuffer reply) {
    ByteBuffer b = reply.duplicate();
    byte[] grant = getFixed(b, GRANT_BYTES);
    expectEnd(b, "grant reply");
    return grant;
  }

  // ---- helpers

  private static int bodyFrameLength(BodyFrame f) {
    return 1 + 8 + 4 + f.metadata().length + RemoteDescriptor.ENCODED_LENGTH + 16 + 4;
  }

  private static void putBodyFrame(ByteBuffer b, BodyFrame f) {
    b.put(f.dictionary() ? DICTIONARY : BATCH).putLong(f.sequence());
    putBytes(b, f.metadata());
    f.body().region().encode(b);
    b.putLong(f.body().offset()).putLong(f.body().length()).putInt(f.crc32c());
  }

  private static ByteBuffer commandBuffer(byte kind, int bodyLength) {
    ByteBuffer b = ByteBuffer.allocate(COMMAND_MAGIC.length + 2 + bodyLength);
    return b.put(COMMAND_MAGIC).put(VERSION).put(kind);
  }

  private static byte[] checkGrant(byte[] grant) {
    if (grant.length != GRANT_BYTES) {
      throw new IllegalArgumentException("a grant has " + GRANT_BYTES + " bytes, got " + grant.length);
    }
    return grant;
  }

  private static void putBytes(ByteBuffer b, byte[] bytes) {
    b.putInt(bytes.length).put(bytes);
  }

  private static void need(ByteBuffer b, int n) {
    if (b.remaining() < n) {
      throw new IllegalArgumentException("truncated: needs " + n + " more bytes, " + b.remaining() + " remain");
    }
  }

  private static byte get(ByteBuffer b) {
    need(b, 1);
    return b.get();
  }

  private static int getInt(ByteBuffer b) {
    need(b, 4);
    return b.getInt();
  }

  private static long getLong(ByteBuffer b) {
    need(b, 8);
    return b.getLong();
  }

  private static byte[] getFixed(ByteBuffer b, int n) {
    need(b, n);
    byte[] out = new byte[n];
    b.get(out);
    return out;
  }

  private static byte[] getBytes(ByteBuffer b, int max) {
    int n = getInt(b);
    if (n < 0 || n > max) {
      throw new IllegalArgumentException("field of " + n + " bytes (at most " + max + ")");
    }
    return getFixed(b, n);
  }

  private static void expectEnd(ByteBuffer b, String what) {
    if (b.hasRemaining()) {
      throw new IllegalArgumentException(b.remaining() + " bytes after the end of the " + what);
    }
  }
}
