package io.sluice.spark.shuffle;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * The folders below which the shuffle files of this application's executors on this host lie, as
 * one executor tells from its own block-manager folders, so the transport may map same-host
 * peers' files there ({@code sluice.transport.shm.trustedFileRoots}). Each block-manager folder
 * ({@code <local dir>/blockmgr-<uuid>}) gives its parent, extended upwards through folders of
 * this user with mode 0700: the per-application folders Spark's workers create (standalone:
 * {@code <spark.local.dir>/spark-<uuid>/executor-<uuid>}, shared by the executors a worker starts)
 * end there, and YARN's application folders (mode 0710) are shared as they are. The walk stops
 * at the first folder that is another user's or open to others, so a root never reaches the
 * user's home or a shared temporary folder. Stateless.
 */
public final class ShuffleFileRoots {
  private static final String OWNER_ONLY = "rwx------";

  private ShuffleFileRoots() {}

  /** The roots for block-manager folders {@code blockManagerDirs}; folders that cannot be resolved give none. */
  public static List<Path> of(List<Path> blockManagerDirs) throws IOException {
    int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    List<Path> roots = new ArrayList<>();
    for (Path dir : blockManagerDirs) {
      Path real;
      try {
        real = dir.toRealPath();
      } catch (IOException e) {
        continue;
      }
      Path root = real.getParent();
      if (root == null) {
        continue;
      }
      while (root.getParent() != null && ownerOnly(root.getParent(), uid)) {
        root = root.getParent();
      }
      if (!roots.contains(root)) {
        roots.add(root);
      }
    }
    return List.copyOf(roots);
  }

  private static boolean ownerOnly(Path dir, int uid) throws IOException {
    PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    return a.isDirectory() && (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS) == uid
        && PosixFilePermissions.toString(a.permissions()).equals(OWNER_ONLY);
  }
}
