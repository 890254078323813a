package io.sluice.spark.shuffle.protocol;

import io.sluice.transport.Checksums;
import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The one wire format between a reducer and the executor holding map outputs: which byte ranges
 * of which registered data files hold a range of partitions. All integers big-endian.
 *
 * <pre>
 * request:  int version(3) | int shuffleId | int count | count x (long mapId | int start | int end)
 * response: int count | count x (int windows | windows x descriptor (32 bytes)
 *                                 | (end - start + 1) x long offset
 *                                 | (end - start) x int crc32c)
 * </pre>
 *
 * A data file is registered as consecutive windows: window {@code i} holds the file's bytes
 * from {@code i * W}, where W is the length of every window but the last (a file of one window
 * has just that one). Offsets are positions in the data file, as the index file holds them:
 * partition {@code p} is {@code [offset[p - start], offset[p - start + 1])}, and {@code
 * crc32c[p - start]} is the {@link Checksums#crc32c(ByteBuffer) CRC32C} of those bytes as the owner
 * registered them (0 for an empty partition), which the reducer checks what it READ against.
 *
 * <p>Only the request carries the version: an owner refuses a request of another version, and the
 * reducer's request fails with that message. Version 3 added the checksums. Stateless.
 */
public final class RangeProtocol {
  public static final int VERSION = 3;
  /** Bound on the windows of one answer (a file of 1 PiB in 1 GiB windows). */
  private static final int MAX_WINDOWS = 1 << 20;
  private static final int QUERY_BYTES = 16;

  private RangeProtocol() {}

  /** Partitions {@code [startPartition, endPartition)} of one map output. */
  public record Query(long mapId, int startPartition, int endPartition) {
    public Query {
      if (startPartition < 0 || endPartition <= startPartition) {
        throw new IllegalArgumentException(
            "bad partition range [" + startPartition + ", " + endPartition + ") of map " + mapId);
      }
    }

    public int partitions() {
      return endPartition - startPartition;
    }
  }

  /** One READ's worth of a range: {@code length} bytes at {@code offset} of one window. */
  public record Piece(RemoteDescriptor window, long offset, long rangeOffset, int length) {}

  /**
   * Where a query's partitions are: the windows of the registered data file, partitions() + 1
   * offsets in the file and the CRC32C of each partition's bytes.
   */
  public record Answer(List<RemoteDescriptor> windows, long[] offsets, int[] checksums) {
    public Answer {
      windows = List.copyOf(windows);
      if (windows.isEmpty()) {
        throw new IllegalArgumentException("an answer needs at least one window");
      }
      if (offsets.length < 1 || checksums.length != offsets.length - 1) {
        throw new IllegalArgumentException(
            offsets.length + " offsets and " + checksums.length + " checksums do not describe one partition range");
      }
      long w = windows.get(0).length();
      for (int i = 0; i < windows.size() - 1; i++) {
        if (windows.get(i).length() != w || w <= 0) {
          throw new IllegalArgumentException("windows of a data file must have one length but the last");
        }
      }
    }

    public long start(int i) {
      return offsets[i];
    }

    public long length(int i) {
      return offsets[i + 1] - offsets[i];
    }

    /** CRC32C of the {@code i}-th partition's bytes, as the owner registered them. */
    public int checksum(int i) {
      return checksums[i];
    }

    /** The window holding file byte {@code at}. */
    public RemoteDescriptor windowAt(long at) {
      return windows.get((int) (at / windowBytes()));
    }

    /** Where file byte {@code at} is in {@link #windowAt}. */
    public long offsetInWindow(long at) {
      return at % windowBytes();
    }

    /** Bytes of the data file its windows cover. */
    public long fileLength() {
      return RangeProtocol.fileLength(windows);
    }

    private long windowBytes() {
      return windows.get(0).length();
    }

    /**
     * The READs for file bytes {@code [start, start + length)}: pieces of at most {@code
     * maxPiece} bytes that never cross a window boundary, in order.
     */
    public List<Piece> pieces(long start, long length, int maxPiece) {
      if (start < 0 || length < 0 || start + length > fileLength()) {
        throw new IllegalArgumentException("range [" + start + ", +" + length + ") outside a file of "
            + fileLength() + " bytes");
      }
      List<Piece> out = new ArrayList<>();
      long w = windowBytes();
      for (long done = 0; done < length;) {
        long at = start + done;
        int window = (int) (at / w);
        long inWindow = at - window * w;
        int n = (int) Math.min(Math.min(maxPiece, length - done), windows.get(window).length() - inWindow);
        out.add(new Piece(windows.get(window), inWindow, done, n));
        done += n;
      }
      return out;
    }
  }

  /** Bytes of the data file that windows cover: all but the last have the first one's length. */
  public static long fileLength(List<RemoteDescriptor> windows) {
    return windows.get(0).length() * (windows.size() - 1) + windows.get(windows.size() - 1).length();
  }

  /** Bytes of a response to these queries. */
  public static long responseBytes(List<Query> queries) {
    long n = 4;
    for (Query q : queries) {
      n += 4 + RemoteDescriptor.ENCODED_LENGTH + 8L * (q.partitions() + 1) + 4L * q.partitions();
    }
    return n;
  }

  public static ByteBuffer encodeRequest(int shuffleId, List<Query> queries) {
    ByteBuffer b = ByteBuffer.allocate(12 + QUERY_BYTES * queries.size());
    b.putInt(VERSION).putInt(shuffleId).putInt(queries.size());
    for (Query q : queries) {
      b.putLong(q.mapId()).putInt(q.startPartition()).putInt(q.endPartition());
    }
    return b.flip();
  }

  /** A decoded request. */
  public record Request(int shuffleId, List<Query> queries) {}

  public static Request decodeRequest(ByteBuffer in) {
    if (in.remaining() < 12) {
      throw new IllegalArgumentException("range request too short: " + in.remaining() + " bytes");
    }
    int version = in.getInt();
    if (version != VERSION) {
      throw new IllegalArgumentException("range request of protocol version " + version + ", this executor speaks "
          + VERSION + (version < VERSION ? " (version " + VERSION + " answers carry the partitions' checksums)" : "")
          + ": every executor of an application must run the same sluice-spark-shuffle build");
    }
    int shuffleId = in.getInt();
    int count = in.getInt();
    if (count < 0 || (long) count * QUERY_BYTES != in.remaining()) {
      throw new IllegalArgumentException(
          "range request says " + count + " queries but has " + in.remaining() + " bytes");
    }
    List<Query> queries = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      queries.add(new Query(in.getLong(), in.getInt(), in.getInt()));
    }
    return new Request(shuffleId, queries);
  }

  public static ByteBuffer encodeResponse(List<Answer> answers) {
    long size = 4;
    for (Answer a : answers) {
      size += 4 + (long) RemoteDescriptor.ENCODED_LENGTH * a.windows().size() + 8L * a.offsets().length
          + 4L * a.checksums().length;
    }
    if (size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("range response of " + size + " bytes");
    }
    ByteBuffer b = ByteBuffer.allocate((int) size);
    b.putInt(answers.size());
    for (Answer a : answers) {
      b.putInt(a.windows().size());
      a.windows().forEach(w -> w.encode(b));
      for (long o : a.offsets()) {
        b.putLong(o);
      }
      for (int c : a.checksums()) {
        b.putInt(c);
      }
    }
    return b.flip();
  }

  /** Decodes a response to {@code queries}, checking it has exactly their shape. */
  public static List<Answer> decodeResponse(ByteBuffer in, List<Query> queries) {
    if (in.remaining() < 4 || in.getInt() != queries.size()) {
      throw new IllegalArgumentException("range response does not answer " + queries.size() + " queries");
    }
    List<Answer> answers = new ArrayList<>(queries.size());
    for (Query q : queries) {
      int count = in.remaining() >= 4 ? in.getInt() : -1;
      if (count < 1 || count > MAX_WINDOWS || in.remaining() < (long) count * RemoteDescriptor.ENCODED_LENGTH) {
        throw new IllegalArgumentException("range response has a bad window count for map " + q.mapId());
      }
      List<RemoteDescriptor> windows = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        windows.add(RemoteDescriptor.decode(in));
      }
      long fileLength = fileLength(windows);
      // The number of offsets and checksums follows from our own query; the bytes for them must
      // be there before anything is allocated.
      if (in.remaining() < 12L * q.partitions() + 8) {
        throw new IllegalArgumentException("range response truncated at map " + q.mapId());
      }
      long[] offsets = new long[q.partitions() + 1];
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = in.getLong();
        if (offsets[i] < 0 || (i > 0 && offsets[i] < offsets[i - 1]) || offsets[i] > fileLength) {
          throw new IllegalArgumentException("range response has bad offsets for map " + q.mapId());
        }
      }
      int[] checksums = new int[q.partitions()];
      for (int i = 0; i < checksums.length; i++) {
        checksums[i] = in.getInt();
        if (checksums[i] != 0 && offsets[i + 1] == offsets[i]) {
          throw new IllegalArgumentException("range response has a checksum for an empty partition of map " + q.mapId());
        }
      }
      answers.add(new Answer(windows, offsets, checksums));
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException("range response has " + in.remaining() + " trailing bytes");
    }
    return answers;
  }
}
