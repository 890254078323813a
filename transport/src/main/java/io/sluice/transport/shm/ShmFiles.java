package io.sluice.transport.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How arena folders and files are created and how a reader opens a peer's: the shm trust model is
 * one OS user, so a reader accepts only a folder of its own user with mode 0700, holding regular
 * files of its own user readable by nobody else, named directly in that folder and opened without
 * following links. Beyond the arena, a reader opens a peer's registered file only below a root it
 * was configured to trust ({@link #openUnderRoot}). A region the peer allocated as a sealed memfd
 * is reopened through the peer's {@code /proc/<pid>/fd/<n>} entry, named for the peer's arena, and
 * its seals are checked ({@link #openMemfd}). A peer that names anything else is refused,
 * whatever the file would contain. A reader reads a peer's files with positional reads ({@link
 * #readAt}), never through a mapping of them. Stateless; thread safe.
 */
final class ShmFiles {
  static final Set<PosixFilePermission> FOLDER_MODE = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> NOT_OWNER = EnumSet.of(
      PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private static final Pattern PROC_FD = Pattern.compile("/proc/(\\d+)/fd/(\\d+)");

  /** A peer's memfd opened for reading, and whether its size is sealed ({@code F_SEAL_SHRINK}) as far as this side can tell. */
  record Opened(FileChannel channel, boolean sealed) {}

  private ShmFiles() {}

  /** Whether {@code file} names a descriptor through /proc ({@code /proc/<pid>/fd/<n>}), as sealed regions are named. */
  static boolean isProcDescriptor(Path file) {
    return PROC_FD.matcher(file.toString()).matches();
  }

  /**
   * Opens the memfd a peer named as {@code /proc/<pid>/fd/<n>}: {@code pid} must be the arena
   * owner's {@code ownerPid}, and what the path reaches a regular file of this user whose memfd
   * name starts with {@code namePrefix} (the arena's token, so a descriptor reused by anything
   * else, or a pid of another namespace, is refused). With {@link SealedMemory} the descriptor is
   * opened once, its seals must include {@code F_SEAL_SHRINK}, and the channel reopens that very
   * descriptor; without it the seals cannot be read, and the region counts as not sealed.
   *
   * @throws IOException naming what is wrong ({@link NoSuchFileException} if the descriptor is gone)
   */
  static Opened openMemfd(Path file, long ownerPid, String namePrefix) throws IOException {
    Matcher m = PROC_FD.matcher(file.toString());
    if (!m.matches() || !m.group(1).equals(Long.toString(ownerPid))) {
      throw new IOException(file + " is not a descriptor of the arena's owner, process " + ownerPid);
    }
    String expected = SealedMemory.PROC_NAME_PREFIX + namePrefix;
    if (!SealedMemory.isAvailable()) {
      PosixFileAttributes before = checkMemfd(file, expected);
      FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
      try {
        if (!before.fileKey().equals(checkMemfd(file, expected).fileKey())) {
          throw new IOException(file + " was replaced while it was opened");
        }
        return new Opened(ch, false);
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
    }
    int fd;
    try {
      fd = SealedMemory.openForReading(file);
    } catch (IOException e) {
      if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
        throw new NoSuchFileException(file.toString());
      }
      throw e;
    }
    try {
      Path mine = SealedMemory.procPath(ProcessHandle.current().pid(), fd);
      checkMemfd(mine, expected);
      int seals = SealedMemory.seals(fd);
      if ((seals & SealedMemory.F_SEAL_SHRINK) == 0) {
        throw new IOException(file + " is a memfd that may be shortened (seals " + Integer.toHexString(seals) + ")");
      }
      return new Opened(FileChannel.open(mine, StandardOpenOption.READ), true);
    } finally {
      SealedMemory.close(fd);
    }
  }

  /** Checks that the /proc entry {@code fd} reaches a regular file of this user whose name starts with {@code expected}; returns its attributes. */
  private static PosixFileAttributes checkMemfd(Path fd, String expected) throws IOException {
    String target = Files.readSymbolicLink(fd).toString();
    if (!target.startsWith(expected)) {
      throw new IOException(fd + " reaches " + target + ", not a memfd of the peer's arena");
    }
    PosixFileAttributes a = Files.readAttributes(fd, PosixFileAttributes.class);
    if (!a.isRegularFile()) {
      throw new IOException(fd + " is not a regular file");
    }
    int owner = (Integer) Files.getAttribute(fd, "unix:uid");
    if (owner != currentUid()) {
      throw new IOException(fd + " belongs to user " + owner + ", not to this process's user " + currentUid());
    }
    return a;
  }

  static FileAttribute<Set<PosixFilePermission>> folderMode() {
    return PosixFilePermissions.asFileAttribute(FOLDER_MODE);
  }

  static FileAttribute<Set<PosixFilePermission>> fileMode() {
    return PosixFilePermissions.asFileAttribute(FILE_MODE);
  }

  /** The user id of this process, as the file system records it. */
  static int currentUid() throws IOException {
    return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
  }

  /**
   * Checks that {@code dir} is an arena a reader may trust: an absolute path without links, a
   * directory of this process's user with mode 0700.
   *
   * @throws IOException naming what is wrong
   */
  static void checkArena(Path dir) throws IOException {
    if (!dir.isAbsolute() || !dir.equals(dir.normalize()) || !dir.toRealPath().equals(dir)) {
      throw new IOException("shm arena " + dir + " is not an absolute path free of links");
    }
    PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!a.isDirectory()) {
      throw new IOException("shm arena " + dir + " is not a directory");
    }
    checkOwner(dir, currentUid());
    if (!a.permissions().equals(FOLDER_MODE)) {
      throw new IOException("shm arena " + dir + " has mode " + PosixFilePermissions.toString(a.permissions())
          + ", expected rwx------");
    }
  }

  /**
   * Opens {@code file} of the checked arena {@code arena} for reading: it must be named directly
   * in the arena, not be a link, and be a regular file of this user that nobody else may access.
   *
   * @throws IOException naming what is wrong
   */
  static FileChannel openInArena(Path arena, Path file) throws IOException {
    if (!file.isAbsolute() || !file.equals(file.normalize()) || !arena.equals(file.getParent())) {
      throw new IOException(file + " is not a file of the peer's shm arena " + arena);
    }
    PosixFileAttributes before = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!before.isRegularFile()) {
      throw new IOException(file + " in the peer's shm arena is not a regular file");
    }
    checkOwner(file, currentUid());
    if (!Collections.disjoint(before.permissions(), NOT_OWNER)) {
      throw new IOException(file + " in the peer's shm arena is accessible to other users ("
          + PosixFilePermissions.toString(before.permissions()) + ")");
    }
    return openChecked(file, before);
  }

  /**
   * Opens {@code file}, named by a peer, for reading if it lies below one of {@code roots}: the
   * path must be absolute, normalized and free of links (it is its own real path), lie below the
   * real path of a root, and name a regular file of this user; the root and every folder from it
   * down to the file must belong to this user and be writable by nobody else, so no other user
   * can swap a part of the path between these checks and the open, which follows no link and is
   * checked to have opened the file that was checked.
   *
   * @return empty if the file is below no root
   * @throws IOException naming why a file below a root is refused
   */
  static Optional<FileChannel> openUnderRoot(List<Path> roots, Path file) throws IOException {
    if (!file.isAbsolute() || !file.equals(file.normalize())) {
      return Optional.empty();
    }
    Path root = null;
    for (Path r : roots) {
      Path real;
      try {
        real = r.toRealPath();
      } catch (IOException e) {
        continue; // a root that does not exist holds nothing
      }
      if (file.startsWith(real) && !file.equals(real)) {
        root = real;
        break;
      }
    }
    if (root == null) {
      return Optional.empty();
    }
    if (!file.toRealPath().equals(file)) {
      throw new IOException(file + " is reached through a link");
    }
    int uid = currentUid();
    for (Path dir = file.getParent(); dir != null && dir.startsWith(root); dir = dir.getParent()) {
      PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      checkOwner(dir, uid);
      if (a.permissions().contains(PosixFilePermission.GROUP_WRITE)
          || a.permissions().contains(PosixFilePermission.OTHERS_WRITE)) {
        throw new IOException("folder " + dir + " may be written by other users ("
            + PosixFilePermissions.toString(a.permissions()) + ")");
      }
    }
    PosixFileAttributes before = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!before.isRegularFile()) {
      throw new IOException(file + " is not a regular file");
    }
    checkOwner(file, uid);
    return Optional.of(openChecked(file, before));
  }

  /** Opens {@code file} without following a link and checks it is still the file of {@code before}. */
  private static FileChannel openChecked(Path file, PosixFileAttributes before) throws IOException {
    FileChannel ch;
    try {
      ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      throw e;
    } catch (FileSystemException e) {
      throw new IOException(file + " cannot be opened without following a link: " + e.getMessage(), e);
    }
    try {
      Object now = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
      if (now == null || !now.equals(before.fileKey())) {
        throw new IOException(file + " was replaced while it was opened");
      }
      return ch;
    } catch (IOException e) {
      ch.close();
      throw e;
    }
  }

  /**
   * Reads bytes of {@code file} from {@code position} into {@code dst} until it is full or the file
   * ends, with positional reads: a file that another process shortened ends the read early, where
   * a mapping of it would fault (a SIGBUS, which the JVM reports as an {@code InternalError} some
   * time after the access, once the copy has returned other bytes). The channel is shared by every
   * reader of the file and an interrupt during a read closes it, so the caller's interrupt status
   * is set aside for the read and restored after it; only an interrupt that arrives during the
   * system call itself still closes the channel.
   *
   * @return the bytes read: {@code dst}'s remaining bytes, or fewer where the file ends first
   */
  static int readAt(FileChannel file, long position, ByteBuffer dst) throws IOException {
    boolean interrupted = Thread.interrupted();
    try {
      int read = 0;
      while (dst.hasRemaining()) {
        int n = file.read(dst, position + read);
        if (n <= 0) {
          break;
        }
        read += n;
      }
      return read;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The size of {@code file} now, with the caller's interrupt status set aside as {@link #readAt} does. */
  static long sizeOf(FileChannel file) throws IOException {
    boolean interrupted = Thread.interrupted();
    try {
      return file.size();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void checkOwner(Path p, int uid) throws IOException {
    int owner = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    if (owner != uid) {
      throw new IOException(p + " belongs to user " + owner + ", not to this process's user " + uid);
    }
  }
}
