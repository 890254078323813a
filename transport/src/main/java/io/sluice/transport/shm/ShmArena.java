package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.region.DirectMemory;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's shared-memory area: a folder {@code sluice-<pid>-<node>} under the shm
 * directory holding one file per allocated region, a {@code token} file that lets a peer prove it
 * sees the same folder, and a {@code slots} file: the revocation table. Each registered region
 * (allocated or file-backed) owns one 8-byte slot holding its key while it is open and 0 once it
 * is revoked; same-host readers check the slot before and after each copy, so revocation takes
 * effect at once without any work by this process per READ.
 *
 * <p>Opening reclaims folders left by processes that no longer exist. Closing deletes the folder.
 * Thread safe.
 */
public final class ShmArena implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShmArena.class);
  /** Bytes of the token that proves two processes see the same folder. */
  public static final int TOKEN_LENGTH = 16;
  public static final int SLOTS = 1 << 17;
  public static final String SLOTS_FILE = "slots";
  public static final String TOKEN_FILE = "token";
  static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final Pattern FOLDER = Pattern.compile("sluice-(\\d+)-[0-9a-f]+");

  /** An allocated region's file and mapping. */
  public record Allocation(Path file, MappedByteBuffer buffer) {}

  /** Where an arena lives and the token that proves a reader sees the same folder. */
  public record Info(String directory, byte[] token) {}

  /** Where a region lives: its backing file, the range in it, and its revocation slot. */
  public record Location(String path, long fileOffset, long length, int slot) {}

  private final Path dir;
  private final byte[] token = new byte[TOKEN_LENGTH];
  private final MappedByteBuffer slots;
  private final BitSet usedSlots = new BitSet(SLOTS);
  private long nextFile;

  private ShmArena(Path dir) throws IOException {
    this.dir = dir;
    new SecureRandom().nextBytes(token);
    Files.createDirectory(dir, ShmFiles.folderMode());
    // The umask may have narrowed the mode further; readers require exactly 0700.
    Files.setPosixFilePermissions(dir, ShmFiles.FOLDER_MODE);
    try (FileChannel ch = createFile(dir.resolve(TOKEN_FILE))) {
      ch.write(java.nio.ByteBuffer.wrap(token));
    }
    try (FileChannel ch = createFile(dir.resolve(SLOTS_FILE))) {
      slots = ch.map(FileChannel.MapMode.READ_WRITE, 0, (long) SLOTS * 8);
    }
  }

  /** Opens the arena of node {@code node} under {@code shmDir}, after reclaiming stale ones. */
  public static ShmArena open(Path shmDir, long node) throws TransportException {
    if (!Files.isDirectory(shmDir) || !Files.isWritable(shmDir)) {
      throw new TransportUnavailableException("shm directory " + shmDir + " is missing or not writable");
    }
    reclaimStale(shmDir);
    Path dir = shmDir.resolve(String.format("sluice-%d-%016x", ProcessHandle.current().pid(), node));
    try {
      return new ShmArena(dir);
    } catch (IOException e) {
      deleteTree(dir);
      throw new TransportUnavailableException("cannot create shm arena " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Whether shared memory can be used at all under {@code shmDir}. */
  public static boolean usable(Path shmDir) {
    return Files.isDirectory(shmDir) && Files.isWritable(shmDir);
  }

  public Info info() {
    return new Info(dir.toString(), token.clone());
  }

  public Path directory() {
    return dir;
  }

  /** Creates a zeroed file of {@code length} bytes and maps it read-write. */
  public Allocation allocate(int length) throws IOException {
    Path file;
    synchronized (this) {
      file = dir.resolve("region-" + (nextFile++));
    }
    try (FileChannel ch = createFile(file)) {
      ch.truncate(length);
      if (ch.size() < length) {
        ch.write(java.nio.ByteBuffer.allocate(1), length - 1L);
      }
      return new Allocation(file, ch.map(FileChannel.MapMode.READ_WRITE, 0, length));
    } catch (IOException e) {
      Files.deleteIfExists(file);
      throw e;
    }
  }

  /** Creates a new file readable and writable by this user only, as readers require. */
  private static FileChannel createFile(Path file) throws IOException {
    return FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
        StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), ShmFiles.fileMode());
  }

  /** Takes a free slot and publishes {@code key} in it. */
  public int takeSlot(long key) throws TransportException {
    int slot;
    synchronized (usedSlots) {
      slot = usedSlots.nextClearBit(0);
      if (slot >= SLOTS) {
        throw new TransportException("shm arena has no free slot: " + SLOTS + " regions registered");
      }
      usedSlots.set(slot);
    }
    LONGS.setVolatile(slots, slot * 8, key);
    return slot;
  }

  /** Revokes the slot's key: readers fail from now on. */
  public void revokeSlot(int slot) {
    LONGS.setVolatile(slots, slot * 8, 0L);
  }

  /** Returns a revoked slot to the free list. */
  public void freeSlot(int slot) {
    revokeSlot(slot);
    synchronized (usedSlots) {
      usedSlots.clear(slot);
    }
  }

  @Override
  public void close() {
    DirectMemory.free(slots);
    deleteTree(dir);
  }

  private static void reclaimStale(Path shmDir) {
    try (Stream<Path> entries = Files.list(shmDir)) {
      entries.forEach(p -> {
        Matcher m = FOLDER.matcher(p.getFileName().toString());
        if (m.matches() && Files.isDirectory(p)) {
          long pid = Long.parseLong(m.group(1));
          boolean alive = ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
          if (!alive) {
            LOG.info("Reclaiming shm arena {} of process {}, which no longer exists", p, pid);
            deleteTree(p);
          }
        }
      });
    } catch (IOException e) {
      LOG.warn("Could not scan {} for stale shm arenas: {}", shmDir, e.getMessage());
    }
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          LOG.warn("Could not delete {}: {}", p, e.getMessage());
        }
      });
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", root, e.getMessage());
    }
  }
}
