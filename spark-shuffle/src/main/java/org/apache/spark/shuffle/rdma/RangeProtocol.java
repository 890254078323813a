package org.apache.spark.shuffle.rdma;

import io.sluice.transport.RemoteDescriptor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The one wire format between a reducer and the executor holding map outputs: which byte ranges
 * of which registered data files hold a range of partitions. All integers big-endian.
 *
 * <pre>
 * request:  int version(1) | int shuffleId | int count | count x (long mapId | int start | int end)
 * response: int count | count x (descriptor (32 bytes) | (end - start + 1) x long offset)
 * </pre>
 *
 * Offsets are positions in the registered region (which starts at byte 0 of the data file), as
 * the index file holds them: partition {@code p} is {@code [offset[p - start], offset[p - start + 1])}.
 * Stateless.
 */
final class RangeProtocol {
  static final int VERSION = 1;
  private static final int QUERY_BYTES = 16;

  private RangeProtocol() {}

  /** Partitions {@code [startPartition, endPartition)} of one map output. */
  record Query(long mapId, int startPartition, int endPartition) {
    Query {
      if (startPartition < 0 || endPartition <= startPartition) {
        throw new IllegalArgumentException(
            "bad partition range [" + startPartition + ", " + endPartition + ") of map " + mapId);
      }
    }

    int partitions() {
      return endPartition - startPartition;
    }
  }

  /** Where a query's partitions are: a registered region and partitions() + 1 offsets in it. */
  record Answer(RemoteDescriptor region, long[] offsets) {
    long start(int i) {
      return offsets[i];
    }

    long length(int i) {
      return offsets[i + 1] - offsets[i];
    }
  }

  /** Bytes of a response to these queries. */
  static long responseBytes(List<Query> queries) {
    long n = 4;
    for (Query q : queries) {
      n += RemoteDescriptor.ENCODED_LENGTH + 8L * (q.partitions() + 1);
    }
    return n;
  }

  static ByteBuffer encodeRequest(int shuffleId, List<Query> queries) {
    ByteBuffer b = ByteBuffer.allocate(12 + QUERY_BYTES * queries.size());
    b.putInt(VERSION).putInt(shuffleId).putInt(queries.size());
    for (Query q : queries) {
      b.putLong(q.mapId()).putInt(q.startPartition()).putInt(q.endPartition());
    }
    return b.flip();
  }

  /** A decoded request. */
  record Request(int shuffleId, List<Query> queries) {}

  static Request decodeRequest(ByteBuffer in) {
    if (in.remaining() < 12) {
      throw new IllegalArgumentException("range request too short: " + in.remaining() + " bytes");
    }
    int version = in.getInt();
    if (version != VERSION) {
      throw new IllegalArgumentException("range request version " + version + ", expected " + VERSION);
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

  static ByteBuffer encodeResponse(List<Answer> answers) {
    long size = 4;
    for (Answer a : answers) {
      size += RemoteDescriptor.ENCODED_LENGTH + 8L * a.offsets().length;
    }
    if (size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("range response of " + size + " bytes");
    }
    ByteBuffer b = ByteBuffer.allocate((int) size);
    b.putInt(answers.size());
    for (Answer a : answers) {
      a.region().encode(b);
      for (long o : a.offsets()) {
        b.putLong(o);
      }
    }
    return b.flip();
  }

  /** Decodes a response to {@code queries}, checking it has exactly their shape. */
  static List<Answer> decodeResponse(ByteBuffer in, List<Query> queries) {
    if (in.remaining() < 4 || in.getInt() != queries.size()) {
      throw new IllegalArgumentException("range response does not answer " + queries.size() + " queries");
    }
    List<Answer> answers = new ArrayList<>(queries.size());
    for (Query q : queries) {
      RemoteDescriptor d = RemoteDescriptor.decode(in);
      long[] offsets = new long[q.partitions() + 1];
      if (in.remaining() < 8L * offsets.length) {
        throw new IllegalArgumentException("range response truncated at map " + q.mapId());
      }
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = in.getLong();
        if (offsets[i] < 0 || (i > 0 && offsets[i] < offsets[i - 1]) || offsets[i] > d.length()) {
          throw new IllegalArgumentException("range response has bad offsets for map " + q.mapId());
        }
      }
      answers.add(new Answer(d, offsets));
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException("range response has " + in.remaining() + " trailing bytes");
    }
    return answers;
  }
}
