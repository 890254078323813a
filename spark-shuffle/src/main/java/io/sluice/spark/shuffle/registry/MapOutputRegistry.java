package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.RegisteredRegion;
import io.sluice.transport.RemoteDescriptor;
import io.sluice.transport.Transport;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The committed map outputs of this executor that peers may READ: each data file is registered
 * (mapped read-only) once, when its writer commits, or on the first request for it, in
 * consecutive windows of at most {@code windowBytes} (a region is at most 2 GiB; see {@link
 * RangeProtocol} for how reducers address them). Answers range
 * queries from the index files that Spark's sort-shuffle writers committed ({@link ShuffleFiles}
 * says where they are).
 *
 * <p>Owns every region it registers; {@link #unregisterShuffle} and {@link #close} revoke them.
 * Thread safe: registration and revocation take the registry's lock, answering reads only the
 * index file.
 */
public final class MapOutputRegistry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputRegistry.class);

  private final Transport transport;
  private final ShuffleFiles files;
  private final Map<Integer, Map<Long, List<RegisteredRegion>>> regions = new HashMap<>();
  private final long windowBytes;
  private boolean closed;

  public MapOutputRegistry(Transport transport, ShuffleFiles files, long windowBytes) {
    if (windowBytes <= 0 || windowBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("registration window of " + windowBytes + " bytes; must be 1.." + Integer.MAX_VALUE);
    }
    this.transport = transport;
    this.files = files;
    this.windowBytes = windowBytes;
  }

  /** Registers the committed data file of a map output; a no-op if it already is. Returns its windows. */
  public List<RemoteDescriptor> register(int shuffleId, long mapId) throws IOException {
    synchronized (this) {
      if (closed) {
        throw new IOException("shuffle transport of this executor is closed");
      }
      // A shuffle is remembered only once one of its map outputs is registered, so queries for
      // shuffles this executor does not hold leave nothing behind.
      List<RegisteredRegion> existing = regions.getOrDefault(shuffleId, Map.of()).get(mapId);
      if (existing != null) {
        return descriptors(existing);
      }
      File data = files.dataFile(shuffleId, mapId);
      long length = data.isFile() ? data.length() : 0;
      if (length == 0) {
        // A map task without records commits only its index file (Spark writes no empty data
        // file). Nothing to read: reducers never ask for empty blocks.
        File index = files.indexFile(shuffleId, mapId);
        if (!index.isFile()) {
          throw new NoSuchFileException(index.getPath(), null,
              "no committed output of shuffle " + shuffleId + " map " + mapId + " on this executor");
        }
        return List.of(new RemoteDescriptor(transport.nodeId(), 0, 0, 0));
      }
      List<RegisteredRegion> windows = new ArrayList<>();
      try {
        for (long at = 0; at < length; at += windowBytes) {
          windows.add(transport.registerFile(data.toPath(), at, Math.min(windowBytes, length - at)));
        }
      } catch (IOException | RuntimeException e) {
        windows.forEach(RegisteredRegion::close);
        throw e;
      }
      regions.computeIfAbsent(shuffleId, id -> new HashMap<>()).put(mapId, windows);
      return descriptors(windows);
    }
  }

  private static List<RemoteDescriptor> descriptors(List<RegisteredRegion> windows) {
    List<RemoteDescriptor> out = new ArrayList<>(windows.size());
    windows.forEach(w -> out.add(w.descriptor()));
    return out;
  }

  /** Registers without failing the map task: a file that cannot be registered now is retried on request. */
  public void registerQuietly(int shuffleId, long mapId) {
    try {
      register(shuffleId, mapId);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not register shuffle {} map {} for remote reads yet: {}", shuffleId, mapId, e.toString());
    }
  }

  /** The region and exact offsets of a query's partitions. */
  public RangeProtocol.Answer describe(int shuffleId, RangeProtocol.Query q) throws IOException {
    List<RemoteDescriptor> windows = register(shuffleId, q.mapId());
    File index = files.indexFile(shuffleId, q.mapId());
    long[] offsets;
    try (FileChannel ch = FileChannel.open(index.toPath(), StandardOpenOption.READ)) {
      // The query comes from a peer: its range is checked against the index before anything is
      // allocated for it, so the answer's size is bounded by the index file's.
      long needed = 8L * (q.endPartition() + 1L);
      if (ch.size() < needed) {
        throw new IOException("index " + index + " has " + (ch.size() / 8 - 1)
            + " partitions, query asks up to " + q.endPartition());
      }
      offsets = new long[q.partitions() + 1];
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
    RangeProtocol.Answer answer = new RangeProtocol.Answer(windows, offsets);
    if (offsets[offsets.length - 1] > answer.fileLength()) {
      throw new IOException("index " + index + " points past the end of its data file");
    }
    return answer;
  }

  /** Revokes every region of a shuffle. */
  public synchronized void unregisterShuffle(int shuffleId) {
    Map<Long, List<RegisteredRegion>> maps = regions.remove(shuffleId);
    if (maps != null) {
      maps.values().forEach(windows -> windows.forEach(RegisteredRegion::close));
    }
  }

  /** Regions (data-file windows) currently registered for one shuffle. */
  public synchronized int registeredCount(int shuffleId) {
    return regions.getOrDefault(shuffleId, Map.of()).values().stream().mapToInt(List::size).sum();
  }

  /** Shuffles this registry holds registrations of. */
  public synchronized int trackedShuffles() {
    return regions.size();
  }

  /** Regions currently registered: a leak check for tests. */
  public synchronized int registeredCount() {
    return regions.values().stream().flatMap(m -> m.values().stream()).mapToInt(List::size).sum();
  }

  @Override
  public synchronized void close() {
    closed = true;
    regions.values().forEach(m -> m.values().forEach(windows -> windows.forEach(RegisteredRegion::close)));
    regions.clear();
  }
}
