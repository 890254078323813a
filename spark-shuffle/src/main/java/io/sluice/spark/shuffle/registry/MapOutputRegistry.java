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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The committed map outputs of this executor that peers may READ: each data file is registered
 * (mapped read-only) once, when its writer commits, or on the first request for it, in
 * consecutive windows of at most {@code windowBytes} (a region is at most 2 GiB; see {@link
 * RangeProtocol} for how reducers address them). Registering reads the data file once through
 * its windows and keeps the CRC32C of every partition, so reducers can check what they READ: a
 * committed map output never changes. Answers range queries from the index files that Spark's
 * sort-shuffle writers committed ({@link ShuffleFiles} says where they are) and those checksums.
 *
 * <p>Owns every region it registers; {@link #unregisterShuffle} and {@link #close} revoke them.
 * Thread safe: the registry's lock guards its table, never the reading of a file, so answering
 * reads only the index file and checksumming one output does not hold up answers for others.
 */
public final class MapOutputRegistry implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputRegistry.class);

  private final Transport transport;
  private final ShuffleFiles files;
  private final Map<Integer, Map<Long, Registration>> regions = new HashMap<>();
  private final long windowBytes;
  private boolean closed;
  /** Shuffles unregistered so far; a registration that saw another count starts over. */
  private long revocations;

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
    return published(shuffleId, mapId).windows();
  }

  /**
   * The registration of a map output, made now if need be. Registering maps the data file and
   * reads it once to checksum its partitions; that is done outside the lock, so answers for other
   * map outputs do not wait for it. A shuffle unregistered meanwhile makes it start over: its
   * files are deleted by then, so the second try fails rather than registering them again.
   */
  private Published published(int shuffleId, long mapId) throws IOException {
    while (true) {
      long revocationsSeen;
      synchronized (this) {
        ensureOpen();
        // A shuffle is remembered only once one of its map outputs is registered, so queries for
        // shuffles this executor does not hold leave nothing behind.
        Registration existing = regions.getOrDefault(shuffleId, Map.of()).get(mapId);
        if (existing != null) {
          return existing.published();
        }
        revocationsSeen = revocations;
      }
      File data = files.dataFile(shuffleId, mapId);
      File index = files.indexFile(shuffleId, mapId);
      long length = data.isFile() ? data.length() : 0;
      if (length == 0) {
        // A map task without records commits only its index file (Spark writes no empty data
        // file). Nothing to read: reducers never ask for empty blocks.
        if (!index.isFile()) {
          throw new NoSuchFileException(index.getPath(), null,
              "no committed output of shuffle " + shuffleId + " map " + mapId + " on this executor");
        }
        return new Published(List.of(new RemoteDescriptor(transport.nodeId(), 0, 0, 0)),
            new int[partitionsOf(index)]);
      }
      long[] offsets = readIndex(index, length);
      Registration made = registerWindows(data, length, offsets);
      synchronized (this) {
        Registration existing = regions.getOrDefault(shuffleId, Map.of()).get(mapId);
        if (closed || existing != null || revocations != revocationsSeen) {
          made.windows().forEach(RegisteredRegion::close);
          if (existing != null) {
            return existing.published();
          }
          continue; // closed: ensureOpen throws; revoked: the files are gone, or another shuffle went
        }
        regions.computeIfAbsent(shuffleId, id -> new HashMap<>()).put(mapId, made);
        return made.published();
      }
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new IOException("shuffle transport of this executor is closed");
    }
  }

  /** Registers the data file in windows and checksums each partition of it through them. */
  private Registration registerWindows(File data, long length, long[] offsets) throws IOException {
    List<RegisteredRegion> windows = new ArrayList<>();
    try {
      for (long at = 0; at < length; at += windowBytes) {
        windows.add(transport.registerFile(data.toPath(), at, Math.min(windowBytes, length - at)));
      }
      return new Registration(windows, checksums(windows, offsets));
    } catch (IOException | RuntimeException e) {
      windows.forEach(RegisteredRegion::close);
      throw e;
    }
  }

  /**
   * The CRC32C of each partition's bytes as peers READ them: through the registered windows (the
   * file's read-only mapping), one partition at a time, across window ends where it spans them.
   * The same checksum as {@link io.sluice.transport.Checksums#crc32c(ByteBuffer)}, fed in pieces.
   */
  private int[] checksums(List<RegisteredRegion> windows, long[] offsets) {
    List<ByteBuffer> views = new ArrayList<>(windows.size());
    windows.forEach(w -> views.add(w.buffer()));
    int[] out = new int[offsets.length - 1];
    CRC32C crc = new CRC32C();
    for (int p = 0; p < out.length; p++) {
      crc.reset();
      for (long at = offsets[p]; at < offsets[p + 1];) {
        int window = (int) (at / windowBytes);
        int from = (int) (at - window * windowBytes);
        int n = (int) Math.min(offsets[p + 1] - at, views.get(window).capacity() - from);
        crc.update(views.get(window).duplicate().limit(from + n).position(from));
        at += n;
      }
      out[p] = (int) crc.getValue();
    }
    return out;
  }

  /** Partitions an index file describes. */
  private static int partitionsOf(File index) throws IOException {
    long size = index.length();
    if (size < 8 || size % 8 != 0 || size > Integer.MAX_VALUE - 8) {
      throw new IOException("index " + index + " of " + size + " bytes is not an index file");
    }
    return (int) (size / 8 - 1);
  }

  /** Every offset of an index file, checked against its data file's length. */
  private static long[] readIndex(File index, long dataLength) throws IOException {
    long[] offsets;
    try (FileChannel ch = FileChannel.open(index.toPath(), StandardOpenOption.READ)) {
      offsets = offsets(ch, index, 0, partitionsOf(index) + 1);
    }
    for (int i = 0; i < offsets.length; i++) {
      if (offsets[i] < 0 || offsets[i] > dataLength || (i > 0 && offsets[i] < offsets[i - 1])) {
        throw new IOException("index " + index + " does not describe its data file of " + dataLength + " bytes");
      }
    }
    return offsets;
  }

  /**
   * {@code count} offsets of index file {@code index} (open as {@code ch}), from partition {@code
   * from}'s start on: partition {@code from + i} spans {@code [offsets[i], offsets[i + 1])} of
   * its data file. Checks nothing about them.
   *
   * @throws IOException if the index ends before them
   */
  public static long[] offsets(FileChannel ch, File index, int from, int count) throws IOException {
    long[] offsets = new long[count];
    ByteBuffer b = ByteBuffer.allocate(8 * count);
    long pos = 8L * from;
    while (b.hasRemaining()) {
      if (ch.read(b, pos + b.position()) < 0) {
        throw new IOException("index " + index + " ended early");
      }
    }
    b.flip();
    for (int i = 0; i < count; i++) {
      offsets[i] = b.getLong();
    }
    return offsets;
  }

  /** A data file's windows and the CRC32C of each of its partitions, as published. */
  private record Registration(List<RegisteredRegion> windows, int[] checksums) {
    Published published() {
      List<RemoteDescriptor> out = new ArrayList<>(windows.size());
      windows.forEach(w -> out.add(w.descriptor()));
      return new Published(out, checksums);
    }
  }

  /** What peers learn of a registered map output: its windows, and every partition's CRC32C. */
  private record Published(List<RemoteDescriptor> windows, int[] checksums) {}

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
    Published published = published(shuffleId, q.mapId());
    List<RemoteDescriptor> windows = published.windows();
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
      offsets = offsets(ch, index, q.startPartition(), q.partitions() + 1);
    }
    if (q.endPartition() > published.checksums().length) {
      throw new IOException("index " + index + " has grown since its map output was registered");
    }
    RangeProtocol.Answer answer = new RangeProtocol.Answer(windows, offsets,
        Arrays.copyOfRange(published.checksums(), q.startPartition(), q.endPartition()));
    if (offsets[offsets.length - 1] > answer.fileLength()) {
      throw new IOException("index " + index + " points past the end of its data file");
    }
    return answer;
  }

  /**
   * The CRC32C of a partition of a map output this registry holds, or empty if it holds none
   * (never registered, or revoked): no registration is made for the question.
   */
  public synchronized java.util.OptionalInt checksum(int shuffleId, long mapId, int partition) {
    Registration r = regions.getOrDefault(shuffleId, Map.of()).get(mapId);
    return r == null || partition < 0 || partition >= r.checksums().length ? java.util.OptionalInt.empty()
        : java.util.OptionalInt.of(r.checksums()[partition]);
  }

  /** Revokes every region of a shuffle. */
  public synchronized void unregisterShuffle(int shuffleId) {
    revocations++;
    Map<Long, Registration> maps = regions.remove(shuffleId);
    if (maps != null) {
      maps.values().forEach(r -> r.windows().forEach(RegisteredRegion::close));
    }
  }

  /** Regions (data-file windows) currently registered for one shuffle. */
  public synchronized int registeredCount(int shuffleId) {
    return regions.getOrDefault(shuffleId, Map.of()).values().stream().mapToInt(r -> r.windows().size()).sum();
  }

  /** Shuffles this registry holds registrations of. */
  public synchronized int trackedShuffles() {
    return regions.size();
  }

  /** Regions currently registered: a leak check for tests. */
  public synchronized int registeredCount() {
    return regions.values().stream().flatMap(m -> m.values().stream()).mapToInt(r -> r.windows().size()).sum();
  }

  @Override
  public synchronized void close() {
    closed = true;
    regions.values().forEach(m -> m.values().forEach(r -> r.windows().forEach(RegisteredRegion::close)));
    regions.clear();
  }
}
