package org.apache.spark.shuffle.rdma;

import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * The committed map outputs of this executor that peers may READ: each data file is registered
 * (mapped read-only) once, when its writer commits, or on the first request for it. Answers range
 * queries from the index files Spark's {@link IndexShuffleBlockResolver} wrote.
 *
 * <p>Owns every region it registers; {@link #unregisterShuffle} and {@link #close} revoke them.
 * Thread safe: registration and revocation take the registry's lock, answering reads only the
 * index file.
 */
final class MapOutputRegistry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputRegistry.class);

  private final Transport transport;
  private final IndexShuffleBlockResolver resolver;
  private final Map<Integer, Map<Long, RegisteredRegion>> regions = new HashMap<>();
  private boolean closed;

  MapOutputRegistry(Transport transport, IndexShuffleBlockResolver resolver) {
    this.transport = transport;
    this.resolver = resolver;
  }

  /** Registers the committed data file of a map output; a no-op if it already is. */
  RemoteDescriptor register(int shuffleId, long mapId) throws IOException {
    synchronized (this) {
      if (closed) {
        throw new IOException("shuffle transport of this executor is closed");
      }
      Map<Long, RegisteredRegion> maps = regions.computeIfAbsent(shuffleId, id -> new HashMap<>());
      RegisteredRegion existing = maps.get(mapId);
      if (existing != null) {
        return existing.descriptor();
      }
      File data = resolver.getDataFile(shuffleId, mapId);
      long length = data.isFile() ? data.length() : 0;
      if (length == 0) {
        // A map task without records commits only its index file (Spark writes no empty data
        // file). Nothing to read: reducers never ask for empty blocks.
        File index = resolver.getIndexFile(shuffleId, mapId, Option.empty());
        if (!index.isFile()) {
          throw new NoSuchFileException(index.getPath(), null,
              "no committed output of shuffle " + shuffleId + " map " + mapId + " on this executor");
        }
        return new RemoteDescriptor(transport.nodeId(), 0, 0, 0);
      }
      RegisteredRegion region = transport.registerFile(data.toPath(), 0, length);
      maps.put(mapId, region);
      return region.descriptor();
    }
  }

  /** Registers without failing the map task: a file that cannot be registered now is retried on request. */
  void registerQuietly(int shuffleId, long mapId) {
    try {
      register(shuffleId, mapId);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not register shuffle {} map {} for remote reads yet: {}", shuffleId, mapId, e.toString());
    }
  }

  /** The region and exact offsets of a query's partitions. */
  RangeProtocol.Answer describe(int shuffleId, RangeProtocol.Query q) throws IOException {
    RemoteDescriptor region = register(shuffleId, q.mapId());
    File index = resolver.getIndexFile(shuffleId, q.mapId(), Option.empty());
    long[] offsets = new long[q.partitions() + 1];
    try (FileChannel ch = FileChannel.open(index.toPath(), StandardOpenOption.READ)) {
      long needed = 8L * (q.endPartition() + 1);
      if (ch.size() < needed) {
        throw new IOException("index " + index + " has " + (ch.size() / 8 - 1)
            + " partitions, query asks up to " + q.endPartition());
      }
      ByteBuffer b = ByteBuffer.allocate(8 * offsets.length);
      long pos = 8L * q.startPartition();
      while (b.hasRemaining()) {
        int n = ch.read(b, pos + b.position());
        if (n < 0) {
          throw new IOException("index " + index + " ended early");
        }
      }
      b.flip();
      for (int i = 0; i < offsets.length; i++) {
        offsets[i] = b.getLong();
      }
    }
    if (offsets[offsets.length - 1] > region.length()) {
      throw new IOException("index " + index + " points past the end of its data file");
    }
    return new RangeProtocol.Answer(region, offsets);
  }

  /** Revokes every region of a shuffle. */
  synchronized void unregisterShuffle(int shuffleId) {
    Map<Long, RegisteredRegion> maps = regions.remove(shuffleId);
    if (maps != null) {
      maps.values().forEach(RegisteredRegion::close);
    }
  }

  /** Regions currently registered: a leak check for tests. */
  synchronized int registeredCount() {
    return regions.values().stream().mapToInt(Map::size).sum();
  }

  @Override
  public synchronized void close() {
    closed = true;
    regions.values().forEach(m -> m.values().forEach(RegisteredRegion::close));
    regions.clear();
  }
}
