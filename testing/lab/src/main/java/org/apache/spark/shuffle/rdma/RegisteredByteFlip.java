package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.apache.spark.SparkEnv;

/**
 * For the lab's Spark corruption step, on an executor: inverts one byte of what this executor
 * registered for a map output, in the memory the transport serves READs from. A provider that
 * registers the data file's read-only mapping serves the file's page cache (the byte is changed
 * in the file); one that registered a copy (the verbs provider on kernels that cannot pin a
 * read-only mapping) serves writable memory (the byte is changed there). The byte is the middle
 * one of the map output's first non-empty partition. Runs inside Spark tasks: refers to nothing
 * but Spark and the shuffle manager.
 */
public final class RegisteredByteFlip {
  /** Map outputs this executor changed already: another task of the same job must not undo it. */
  private static final java.util.Set<String> FLIPPED = new java.util.HashSet<>();

  private RegisteredByteFlip() {}

  /**
   * Inverts the byte if this executor registered map {@code mapId} of shuffle {@code shuffleId};
   * a description of what was changed, or empty when this executor does not hold it.
   */
  public static synchronized Optional<String> flip(int shuffleId, long mapId, int partitions, Path dataFile)
      throws IOException {
    if (FLIPPED.contains(shuffleId + "/" + mapId)) {
      return Optional.empty();
    }
    Optional<ExecutorShuffleTransport> t = ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).transport();
    if (t.isEmpty() || !Files.exists(dataFile)) {
      return Optional.empty();
    }
    RangeProtocol.Answer answer;
    try {
      answer = t.get().registry().describe(shuffleId, new RangeProtocol.Query(mapId, 0, partitions));
    } catch (IOException | RuntimeException e) {
      return Optional.empty(); // not registered by this executor
    }
    long[] offsets = answer.offsets();
    int p = 0;
    while (p < partitions && offsets[p + 1] == offsets[p]) {
      p++;
    }
    if (p == partitions) {
      throw new IOException("map " + mapId + " of shuffle " + shuffleId + " wrote no bytes");
    }
    long at = (offsets[p] + offsets[p + 1]) / 2;
    FLIPPED.add(shuffleId + "/" + mapId);
    long windowStart = 0;
    for (RemoteDescriptor w : answer.windows()) {
      if (at < windowStart + w.length()) {
        long address = w.address() + (at - windowStart);
        if (writable(address)) {
          byte b = UNSAFE.getByte(address);
          UNSAFE.putByte(address, (byte) ~b);
          return Optional.of("inverted byte " + at + " of partition " + p + " in the registered copy of " + dataFile.getFileName());
        }
        try (FileChannel ch = FileChannel.open(dataFile, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
          ByteBuffer one = ByteBuffer.allocate(1);
          ch.read(one, at);
          one.put(0, (byte) ~one.get(0)).rewind();
          ch.write(one, at);
        }
        return Optional.of("inverted byte " + at + " of partition " + p + " in " + dataFile.getFileName()
            + " (registered as its mapping)");
      }
      windowStart += w.length();
    }
    throw new IOException("byte " + at + " lies in no registered window of map " + mapId);
  }

  /** Whether {@code address} lies in a writable mapping of this process (/proc/self/maps). */
  private static boolean writable(long address) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
      String[] f = line.split("\\s+");
      String[] range = f[0].split("-");
      long from = Long.parseUnsignedLong(range[0], 16);
      long to = Long.parseUnsignedLong(range[1], 16);
      if (Long.compareUnsigned(address, from) >= 0 && Long.compareUnsigned(address, to) < 0) {
        return f[1].charAt(1) == 'w';
      }
    }
    return false;
  }

  private static final sun.misc.Unsafe UNSAFE = unsafe();

  private static sun.misc.Unsafe unsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
