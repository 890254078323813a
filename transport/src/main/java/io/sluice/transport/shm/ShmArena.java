package io.sluice.transport.shm;

import io.sluice.transport.TransportException;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.region.DirectMemory;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's shared-memory area: a folder {@code sluice-<pid>-<node>} under the shm
 * directory holding one file per allocated region, a {@code token} file that lets a peer prove it
 * sees the same folder, an {@code owner} file locked by this process for the arena's life, and a
 * {@code slots} file: the revocation table. Where {@link SealedMemory} is available (and the
 * transport does not ask for files), a region is a sealed memfd instead of a file: readers reopen
 * it through {@code /proc/<pid>/fd/<n>}, and no process can cut it short under their mappings. Each registered region
 * (allocated or file-backed) owns one 8-byte slot holding its key while it is open and 0 once it
 * is revoked; same-host readers check the slot before and after each copy, so revocation takes
 * effect at once without any work by this process per READ.
 *
 * <p>Opening starts the clean-up of folders whose owner lock nobody holds, off the caller's
 * thread ({@link #reclaimStale}). Closing deletes the folder.
 * Thread safe.
 */
public final class ShmArena implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ShmArena.class);
  /** Bytes of the token that proves two processes see the same folder. */
  public static final int TOKEN_LENGTH = 16;
  public static final int SLOTS = 1 << 17;
  public static final String SLOTS_FILE = "slots";
  public static final String TOKEN_FILE = "token";
  /** Locked by the owner for the arena's life. */
  public static final String OWNER_FILE = "owner";
  static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  /** Read-only zeros that reserve a region's pages, small enough to stay in cache; each writer takes its own duplicate. */
  private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 << 10).asReadOnlyBuffer();
  private static final Pattern FOLDER = Pattern.compile("sluice-(\\d+)-[0-9a-f]+");
  /** Entries the clean-up looks at in the shm directory, and in one stale arena (its files and a few more). */
  static final int MAX_RECLAIM_ENTRIES = SLOTS + 16;

  /**
   * An allocated region: the path a reader opens ({@code /proc/<pid>/fd/<n>} of a sealed memfd, or
   * a file in the folder), its mapping, and the memfd's descriptor in this process ({@code -1} for a
   * file). Given back with {@link #discard}.
   */
  public record Allocation(String path, MappedByteBuffer buffer, int memfd) {
    /** Whether no process can change the region's size. */
    public boolean sealed() {
      return memfd >= 0;
    }
  }

  /** Where an arena lives and the token that proves a reader sees the same folder. */
  public record Info(String directory, byte[] token) {}

  /** Where a region lives: its backing file, the range in it, and its revocation slot. */
  public record Location(String path, long fileOffset, long length, int slot) {}

  private final Path dir;
  private final byte[] token;
  /** The prefix of every memfd's name: the token in hex, which a reader checks through /proc. */
  private final String memfdName;
  private final boolean sealed;
  private final MappedByteBuffer slots;
  /** Held for the arena's life: the clean-up of other processes takes it as proof we are alive. */
  private final FileLock ownerLock;
  private final BitSet usedSlots = new BitSet(SLOTS);
  /** Set once by {@link #close()}, guarded by {@code usedSlots}: the slot table is unmapped from then. */
  private boolean closed;
  /** Completes when the clean-up of stale arenas that opening started has ended. */
  private final CompletableFuture<Void> reclaimed;
  private long nextFile;

  private ShmArena(Path dir, byte[] token, MappedByteBuffer slots, FileLock ownerLock,
      CompletableFuture<Void> reclaimed, boolean sealed) {
    this.reclaimed = reclaimed;
    this.dir = dir;
    this.token = token;
    this.memfdName = memfdNamePrefix(token);
    this.sealed = sealed;
    this.slots = slots;
    this.ownerLock = ownerLock;
  }

  /**
   * Opens the arena of node {@code node} under {@code shmDir}, after reclaiming stale ones; its
   * regions are sealed memfds where {@link SealedMemory} is available.
   */
  public static ShmArena open(Path shmDir, long node) throws TransportException {
    return open(shmDir, node, true);
  }

  /**
   * Opens the arena of node {@code node} under {@code shmDir}, after reclaiming stale ones; with
   * {@code sealed} its regions are sealed memfds where {@link SealedMemory} is available, files in
   * the folder otherwise.
   */
  public static ShmArena open(Path shmDir, long node, boolean sealed) throws TransportException {
    if (!Files.isDirectory(shmDir) || !Files.isWritable(shmDir)) {
      throw new TransportUnavailableException("shm directory " + shmDir + " is missing or not writable");
    }
    CompletableFuture<Void> reclaimed = reclaimStaleInBackground(shmDir);
    // Not String.format, whose locale set-up would be most of a cold open's cost here.
    String name = "sluice-" + ProcessHandle.current().pid() + "-" + HexFormat.of().toHexDigits(node);
    // Built under a name the clean-up ignores and renamed once the owner lock is held, so no
    // process ever sees an arena whose lock is not held by a live owner.
    Path building = shmDir.resolve(".building-" + name);
    Path dir = shmDir.resolve(name);
    FileChannel lockFile = null;
    MappedByteBuffer slots = null;
    try {
      byte[] token = new byte[TOKEN_LENGTH];
      new SecureRandom().nextBytes(token);
      Files.createDirectory(building, ShmFiles.folderMode());
      // The umask may have narrowed the mode further; readers require exactly 0700.
      Files.setPosixFilePermissions(building, ShmFiles.FOLDER_MODE);
      lockFile = createFile(building.resolve(OWNER_FILE));
      FileLock lock = lockFile.lock();
      try (FileChannel ch = createFile(building.resolve(TOKEN_FILE))) {
        ch.write(ByteBuffer.wrap(token));
      }
      try (FileChannel ch = createFile(building.resolve(SLOTS_FILE))) {
        slots = ch.map(FileChannel.MapMode.READ_WRITE, 0, (long) SLOTS * 8);
      }
      Files.move(building, dir, StandardCopyOption.ATOMIC_MOVE);
      return new ShmArena(dir, token, slots, lock, reclaimed, sealed && SealedMemory.isAvailable());
    } catch (IOException e) {
      if (slots != null) {
        DirectMemory.free(slots);
      }
      deleteTree(building);
      deleteTree(dir);
      closeQuietly(lockFile);
      throw new TransportUnavailableException("cannot create shm arena " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Whether shared memory can be used at all under {@code shmDir}. */
  public static boolean usable(Path shmDir) {
    return Files.isDirectory(shmDir) && Files.isWritable(shmDir);
  }

  /** Completes once the clean-up of stale arenas started by {@link #open} has ended. */
  CompletableFuture<Void> reclaimed() {
    return reclaimed;
  }

  public Info info() {
    return new Info(dir.toString(), token.clone());
  }

  public Path directory() {
    return dir;
  }

  /** The pid of the process that owns the arena folder {@code dir}, by its name; -1 if it is not an arena's name. */
  static long ownerPid(Path dir) {
    Matcher m = FOLDER.matcher(String.valueOf(dir.getFileName()));
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }

  /** Whether regions are sealed memfds ({@link SealedMemory}) rather than files. */
  public boolean sealed() {
    return sealed;
  }

  /** What the name of each of this arena's memfds starts with: {@code sluice-<token in hex>-}. */
  static String memfdNamePrefix(byte[] token) {
    return "sluice-" + HexFormat.of().formatHex(token) + "-";
  }

  /**
   * Creates a zeroed region of {@code length} bytes and maps it read-write: a sealed memfd, or a
   * file in the folder (see {@link #sealed()}). Every page is given here (a sparse file would only
   * fail on first touch, when a full tmpfs turns the write into a fault far from here): the memfd's
   * by {@code fallocate}, the file's by one pass of zeros.
   *
   * @throws IOException when the region cannot be had (nothing is left behind)
   */
  public Allocation allocate(int length) throws IOException {
    long n;
    synchronized (this) {
      n = nextFile++;
    }
    return sealed ? allocateSealed(n, length) : allocateFile(dir.resolve("region-" + n), length);
  }

  /**
   * A sealed memfd named {@code sluice-<token>-region-<n>}, mapped through this process's own
   * {@code /proc/self/fd} entry; its descriptor stays open, and named by {@code /proc/<pid>/fd}, for
   * readers to reopen, until {@link #discard}.
   */
  private Allocation allocateSealed(long n, int length) throws IOException {
    int fd = SealedMemory.create(memfdName + "region-" + n, length);
    try (FileChannel ch = FileChannel.open(SealedMemory.procPath(ProcessHandle.current().pid(), fd),
        StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      MappedByteBuffer mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, length);
      return new Allocation(SealedMemory.procPath(ProcessHandle.current().pid(), fd).toString(), mapped, fd);
    } catch (IOException | RuntimeException e) {
      SealedMemory.close(fd);
      throw e;
    }
  }

  private static Allocation allocateFile(Path file, int length) throws IOException {
    try (FileChannel ch = createFile(file)) {
      long at = 0;
      while (at < length) {
        ByteBuffer zeros = ZEROS.duplicate();
        zeros.limit((int) Math.min(zeros.capacity(), length - at));
        at += ch.write(zeros, at);
      }
      return new Allocation(file.toString(), ch.map(FileChannel.MapMode.READ_WRITE, 0, length), -1);
    } catch (IOException e) {
      Files.deleteIfExists(file);
      throw e;
    }
  }

  /**
   * Lets go of an allocation's backing once its mapping is freed: closes the memfd's descriptor
   * (its memory comes back when no reader holds it either) or deletes the file. A reader that
   * reopens the path after this reaches nothing, or whatever reuses the descriptor's number; its
   * slot check refuses that, as the key is no longer in the slot.
   */
  public void discard(Allocation a) {
    try {
      if (a.sealed()) {
        SealedMemory.close(a.memfd());
      } else {
        Files.deleteIfExists(Path.of(a.path()));
      }
    } catch (IOException e) {
      LOG.warn("Could not let go of shm region {}: {}", a.path(), e.getMessage());
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
      if (closed) {
        throw new TransportException("shm arena " + dir + " is closed");
      }
      slot = usedSlots.nextClearBit(0);
      if (slot >= SLOTS) {
        throw new TransportException("shm arena has no free slot: " + SLOTS + " regions registered");
      }
      usedSlots.set(slot);
    }
    LONGS.setVolatile(slots, slot * 8, key);
    return slot;
  }

  /**
   * Revokes the slot's key: readers fail from now on. After {@link #close()} it does nothing:
   * the slot table is unmapped then (a region that outlives its transport is released later, by
   * whoever still holds it), and the table's file is gone with every key in it.
   */
  public void revokeSlot(int slot) {
    synchronized (usedSlots) {
      if (!closed) {
        LONGS.setVolatile(slots, slot * 8, 0L);
      }
    }
  }

  /** Returns a revoked slot to the free list. */
  public void freeSlot(int slot) {
    synchronized (usedSlots) {
      if (!closed) {
        LONGS.setVolatile(slots, slot * 8, 0L);
        usedSlots.clear(slot);
      }
    }
  }

  @Override
  public void close() {
    synchronized (usedSlots) {
      if (closed) {
        return;
      }
      closed = true;
    }
    DirectMemory.free(slots);
    deleteTree(dir);
    closeQuietly(ownerLock.channel()); // releases the lock
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException e) {
        LOG.warn("Could not close {}: {}", ch, e.getMessage());
      }
    }
  }

  /**
   * Removes the arenas whose owner lock nobody holds, on a daemon thread of its own so that no
   * number of stale folders or files delays start-up. Liveness is never judged by pid: processes
   * of other PID namespaces (containers sharing the folder) have pids that mean nothing here.
   * Folders named with this process's pid are left alone without opening their lock file: they
   * are this JVM's (closing a descriptor of a file drops the process's POSIX locks on it) or a
   * process of another namespace with the same number, which is alive as far as we know.
   *
   * <p>The shm directory is shared with every local user, so the clean-up never resolves a path
   * twice: it holds the shm directory open, opens each candidate relative to it without following
   * a link, checks that the folder is this user's with mode 0700 before touching anything in it,
   * and deletes the folder's entries relative to that open folder ({@code unlinkat}). A folder
   * swapped for a link at any moment is never followed, and nothing outside it is ever deleted.
   */
  private static CompletableFuture<Void> reclaimStaleInBackground(Path shmDir) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        reclaimStale(shmDir);
      } finally {
        done.complete(null);
      }
    }, "sluice-shm-reclaim");
    t.setDaemon(true);
    t.start();
    return done;
  }

  static void reclaimStale(Path shmDir) {
    long self = ProcessHandle.current().pid();
    UserPrincipal user;
    try {
      user = Files.getOwner(Path.of("/proc/self"));
    } catch (IOException e) {
      LOG.warn("Not reclaiming stale shm arenas under {}: cannot tell this process's user: {}", shmDir, e.getMessage());
      return;
    }
    try (DirectoryStream<Path> listing = Files.newDirectoryStream(shmDir)) {
      if (!(listing instanceof SecureDirectoryStream<Path> parent)) {
        LOG.warn("Not reclaiming stale shm arenas under {}: the platform cannot delete relative to an open folder",
            shmDir);
        return;
      }
      int seen = 0;
      for (Path entry : listing) {
        if (++seen > MAX_RECLAIM_ENTRIES) {
          LOG.warn("Stopped scanning {} for stale shm arenas after {} entries", shmDir, MAX_RECLAIM_ENTRIES);
          return;
        }
        Path name = entry.getFileName();
        Matcher m = FOLDER.matcher(name.toString());
        if (m.matches() && Long.parseLong(m.group(1)) != self) {
          reclaimIfUnowned(parent, name, shmDir.resolve(name), user);
        }
      }
    } catch (IOException | DirectoryIteratorException e) {
      LOG.warn("Could not scan {} for stale shm arenas: {}", shmDir, e.getMessage());
    }
  }

  /**
   * Deletes the arena {@code name} of the open shm directory if it is this user's, mode 0700, and
   * its owner lock can be taken; holds the lock while deleting.
   */
  private static void reclaimIfUnowned(SecureDirectoryStream<Path> parent, Path name, Path shown,
      UserPrincipal user) {
    // Opened with O_NOFOLLOW relative to the open shm directory: a link is refused, never followed.
    try (SecureDirectoryStream<Path> arena = parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
      // fstat of the open folder: the attributes are those of what will be deleted from.
      PosixFileAttributes a = arena.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
      if (!a.isDirectory() || !a.owner().equals(user) || !a.permissions().equals(ShmFiles.FOLDER_MODE)) {
        LOG.debug("Leaving {}: not a folder of this user with mode rwx------", shown);
        return;
      }
      try (SeekableByteChannel lockChannel = arena.newByteChannel(Path.of(OWNER_FILE),
          Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS))) {
        FileLock lock = ((FileChannel) lockChannel).tryLock();
        if (lock == null) {
          return; // its owner is alive
        }
        LOG.info("Reclaiming shm arena {}: no process holds its owner lock", shown);
        deleteEntries(arena, shown);
      } catch (NoSuchFileException e) {
        // Every arena gets its lock file before its name, so this one was left half deleted.
        LOG.info("Reclaiming shm arena {}: it has no owner lock file", shown);
        deleteEntries(arena, shown);
      }
      // unlinkat(AT_REMOVEDIR) of the name: fails on a link or on a folder that is not empty.
      parent.deleteDirectory(name);
    } catch (IOException | OverlappingFileLockException | ClassCastException | DirectoryIteratorException e) {
      LOG.debug("Leaving shm arena {}: {}", shown, e.toString());
    }
  }

  /**
   * Deletes the entries of the open arena folder, each relative to it; arenas hold no folders, so
   * none is descended into (an empty one is removed). At most {@link #MAX_RECLAIM_ENTRIES} entries.
   */
  private static void deleteEntries(SecureDirectoryStream<Path> arena, Path shown) throws IOException {
    List<Path> names = new ArrayList<>();
    for (Path p : arena) {
      if (names.size() == MAX_RECLAIM_ENTRIES) {
        LOG.warn("Shm arena {} holds more than {} entries; deleting the first of them only", shown,
            MAX_RECLAIM_ENTRIES);
        break;
      }
      names.add(p.getFileName());
    }
    for (Path n : names) {
      try {
        arena.deleteFile(n); // unlinkat(fd, n, 0): a link is removed itself, its target never touched
      } catch (IOException notAFile) {
        try {
          arena.deleteDirectory(n);
        } catch (IOException e) {
          LOG.debug("Could not delete {} of {}: {}", n, shown, e.toString());
        }
      }
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
